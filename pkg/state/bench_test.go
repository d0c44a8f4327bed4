package state_test

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"testing"

	"github.com/rated-dev/rated/internal/redistest"
	"github.com/rated-dev/rated/pkg/state"
)

// reportSize is the size of a report record with a d = 384 context and K = 10 candidates
// (pkg/router's records: 1.5 KiB of context, 10 × 33 bytes of candidates, ids and outcome).
const reportSize = 1900

// BenchmarkAppend is the durable append alone, in batches of 1 to 1,024 records (the router's
// single writer puts every report waiting into one batch: group commit, and on Redis one script
// for the batch, which is the pipelining). Redis runs with appendonly yes and appendfsync always
// (an acknowledged append is on disk), bbolt fsyncs every commit: the reference in the same run.
// records/s counts records made durable per second.
func BenchmarkAppend(b *testing.B) {
	rec := make([]byte, reportSize)
	for i := range rec {
		rec[i] = byte(i)
	}
	srv := redistest.Start(b)
	// Redis's own figure on the same server: SETs of a report's size from one connection,
	// pipelined 256 deep (redis-benchmark, the Debian package's). Redis reads a pipeline 16 KiB
	// at a time and, with appendfsync always, fsyncs between reads, so a pipeline of 1.9 KB
	// commands pays an fsync every few commands; one script carrying the whole batch is read
	// whole, run, and fsynced once.
	b.Run("redis-benchmark/set-P256", func(b *testing.B) {
		bin, err := exec.LookPath("redis-benchmark")
		if err != nil {
			b.Skip("redis-benchmark not installed")
		}
		for i := 0; i < b.N; i++ {
			out, err := exec.Command(bin, "-h", "127.0.0.1", "-p", strconv.Itoa(srv.Port), "-t", "set", "-d", strconv.Itoa(reportSize),
				"-P", "256", "-c", "1", "-n", "20000", "-q").CombinedOutput()
			if err != nil {
				b.Fatalf("redis-benchmark: %v\n%s", err, out)
			}
			// "SET: 41356.49 requests per second, p50=5.511 msec"
			m := regexp.MustCompile(`SET: ([0-9.]+) requests per second`).FindSubmatch(out)
			if m == nil {
				b.Fatalf("redis-benchmark said %q", out)
			}
			v, _ := strconv.ParseFloat(string(m[1]), 64)
			b.ReportMetric(v, "records/s")
		}
	})
	for _, batch := range []int{1, 16, 256, 1024} {
		recs := make([][]byte, batch)
		for i := range recs {
			recs[i] = rec
		}
		run := func(b *testing.B, s state.Store) {
			defer s.Close()
			b.SetBytes(int64(batch * reportSize))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := s.Append(context.Background(), recs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "records/s")
		}
		b.Run(fmt.Sprintf("redis/batch=%d", batch), func(b *testing.B) {
			r, err := state.OpenRedis(context.Background(), srv.URL())
			if err != nil {
				b.Fatal(err)
			}
			run(b, r)
		})
		b.Run(fmt.Sprintf("bolt/batch=%d", batch), func(b *testing.B) {
			s, err := state.OpenBolt(b.TempDir(), state.BoltOptions{})
			if err != nil {
				b.Fatal(err)
			}
			run(b, s)
		})
	}
}
