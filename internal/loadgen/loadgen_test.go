package loadgen

import (
	"context"
	"testing"
	"time"
)

func TestScheduleAndBounds(t *testing.T) {
	var sent []int
	res, err := Run(context.Background(), Config{Rate: 1000, Workers: 1, Duration: 5 * time.Second, Requests: 50},
		func(_ context.Context, i int) (int, error) { sent = append(sent, i); return 200, nil })
	if err != nil || res.Sent != 50 || res.OK != 50 || len(sent) != 50 {
		t.Fatalf("%+v %v", res, err)
	}
	// 50 requests at 1,000/s are scheduled over 49 ms: the run cannot be much faster.
	if res.Elapsed < 49*time.Millisecond {
		t.Fatalf("elapsed %v: the schedule was not kept", res.Elapsed)
	}
	res, _ = Run(context.Background(), Config{Rate: 100, Workers: 2, Duration: 100 * time.Millisecond, Requests: 1e6},
		func(context.Context, int) (int, error) { return 503, nil })
	if res.Sent > 20 || res.OK != 0 || res.Codes[503] != res.Sent {
		t.Fatalf("duration bound or status counting: %+v", res)
	}
}

func TestPercentileNearestRank(t *testing.T) {
	r := Result{Latencies: []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}
	if r.Percentile(50) != 5 || r.Percentile(99) != 10 || r.Percentile(10) != 1 {
		t.Fatalf("p50 %v p99 %v p10 %v", r.Percentile(50), r.Percentile(99), r.Percentile(10))
	}
}

func TestCheckLoopback(t *testing.T) {
	for _, ok := range []string{"http://127.0.0.1:8080", "http://127.5.0.1/x", "http://[::1]:9/", "http://localhost:1"} {
		if err := CheckLoopback(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"http://10.0.0.1", "http://192.168.1.1:80", "http://example.com", "http://8.8.8.8"} {
		if CheckLoopback(bad) == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
