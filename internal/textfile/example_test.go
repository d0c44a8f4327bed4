package textfile_test

import (
	"fmt"
	"strings"

	"github.com/rated-dev/rated/internal/textfile"
)

// A byte-order mark and blank lines are skipped; invalid UTF-8 is an error naming the line and
// byte.
func ExampleLines() {
	in := "\ufeffq1\tt1\t1\n\nq2\tt\xff2\t1\n"
	err := textfile.Lines(strings.NewReader(in), "qrels/test.tsv", func(line int, raw []byte) error {
		fmt.Printf("%d: %q\n", line, raw)
		return nil
	})
	fmt.Println(err)
	// Output:
	// 1: "q1\tt1\t1"
	// qrels/test.tsv:3: invalid UTF-8 at byte 5 (0xff)
}
