package configs_test

import (
	"fmt"
	"os"

	"github.com/rated-dev/rated/configs"
)

// From a directory that holds no configs/ folder, the docs' paths read the copies embedded in
// the binary.
func ExampleReadFile() {
	dir, _ := os.MkdirTemp("", "elsewhere")
	defer os.RemoveAll(dir)
	wd, _ := os.Getwd()
	os.Chdir(dir)
	defer os.Chdir(wd)
	data, err := configs.ReadFile("configs/recommended.yaml")
	fmt.Println(err == nil && len(data) > 0)
	_, err = configs.ReadFile("configs/nosuch.yaml")
	fmt.Println(os.IsNotExist(err))
	// Output:
	// true
	// true
}
