package state_test

import (
	"context"
	"fmt"
	"os"

	"github.com/rated-dev/rated/pkg/state"
)

// A router's restart: it appends records, saves a snapshot covering the first two, and after
// reopening the store rebuilds from the snapshot plus the records after it (only the third).
func ExampleOpenBolt() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "state")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	st, err := state.OpenBolt(dir, state.BoltOptions{})
	if err != nil {
		panic(err)
	}
	last, err := st.Append(ctx, [][]byte{[]byte("tool a failed"), []byte("tool b ok"), []byte("tool a ok")})
	if err != nil {
		panic(err)
	}
	fmt.Println("appended up to", last) // sequence numbers start at 1
	if err := st.SaveSnapshot(ctx, 2, []byte("a: 0/1, b: 1/1")); err != nil {
		panic(err)
	}
	st.Close()
	st, err = state.OpenBolt(dir, state.BoltOptions{})
	if err != nil {
		panic(err)
	}
	defer st.Close()
	seq, snap, ok, err := st.LoadSnapshot(ctx)
	if err != nil || !ok {
		panic(fmt.Sprint("no snapshot: ", err))
	}
	fmt.Printf("snapshot at %d: %s\n", seq, snap)
	err = st.Records(ctx, seq, func(seq uint64, rec []byte) error {
		fmt.Printf("replay %d: %s\n", seq, rec)
		return nil
	})
	if err != nil {
		panic(err)
	}
	// Output:
	// appended up to 3
	// snapshot at 2: a: 0/1, b: 1/1
	// replay 3: tool a ok
}
