package loadgen_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"time"

	"github.com/rated-dev/rated/internal/loadgen"
)

// Eight requests at 1,000 per second against a local server that answers 503 to every fourth
// (i = 3 and 7): 6 succeed, and only their latencies are kept. A target off this machine is
// refused before anything is sent.
func ExampleRun() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if i, _ := strconv.Atoi(r.URL.Query().Get("i")); i%4 == 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	fmt.Println("example.com refused:", loadgen.CheckLoopback("http://example.com/v1/select") != nil)
	if err := loadgen.CheckLoopback(srv.URL); err != nil {
		panic(err)
	}
	do := func(ctx context.Context, i int) (int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/?i="+strconv.Itoa(i), nil)
		if err != nil {
			return 0, err
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	res, err := loadgen.Run(context.Background(), loadgen.Config{Rate: 1000, Workers: 4, Duration: 10 * time.Second, Requests: 8}, do)
	if err != nil {
		panic(err)
	}
	fmt.Println("sent", res.Sent, "ok", res.OK, "codes", res.Codes, "latencies", len(res.Latencies))
	// Output:
	// example.com refused: true
	// sent 8 ok 6 codes map[200:6 503:2] latencies 6
}
