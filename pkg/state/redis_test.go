package state_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/rated-dev/rated/internal/redistest"
	"github.com/rated-dev/rated/pkg/state"
	"github.com/rated-dev/rated/pkg/state/statetest"
)

func openRedis(t *testing.T, url string) *state.Redis {
	t.Helper()
	r, err := state.OpenRedis(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRedisConformance(t *testing.T) {
	srv := redistest.Start(t)
	urls := map[state.Store]string{}
	statetest.Run(t, statetest.Factory{
		Open: func(t *testing.T) state.Store {
			u := srv.URL()
			r := openRedis(t, u)
			urls[r] = u
			return r
		},
		Reopen: func(t *testing.T, s state.Store) state.Store {
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			return openRedis(t, urls[s])
		},
	})
	statetest.RunShared(t, statetest.SharedFactory{Open: func(t *testing.T) (state.Shared, state.Shared) {
		u := srv.URL()
		return openRedis(t, u), openRedis(t, u)
	}})
}

// TestRedisSurvivesACrash: records acknowledged before a kill -9 of redis-server are there after
// it restarts from its append-only file, and the sequence goes on.
func TestRedisSurvivesACrash(t *testing.T) {
	srv := redistest.Start(t)
	u := srv.URL()
	r := openRedis(t, u)
	r.Append(context.Background(), [][]byte{[]byte("a"), []byte("b")})
	if err := r.SaveSnapshot(context.Background(), 1, []byte("snap")); err != nil {
		t.Fatal(err)
	}
	if desc, safe := r.Durability(); !safe || !strings.Contains(desc, "appendfsync always") {
		t.Fatalf("durability %q %v", desc, safe)
	}
	srv.Kill()
	if _, err := r.Append(context.Background(), [][]byte{[]byte("lost")}); !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("append to a dead server: %v, want ErrUnavailable", err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	// The same client reconnects by itself.
	if last, err := r.Append(context.Background(), [][]byte{[]byte("c")}); err != nil || last != 3 {
		t.Fatalf("append after the restart: %d %v, want 3", last, err)
	}
	seq, data, ok, err := r.LoadSnapshot(context.Background())
	if seq != 1 || string(data) != "snap" || !ok || err != nil {
		t.Fatalf("snapshot after the restart: %d %q %v %v", seq, data, ok, err)
	}
	var got []string
	r.Records(context.Background(), 1, func(seq uint64, rec []byte) error { got = append(got, string(rec)); return nil })
	if strings.Join(got, ",") != "b,c" {
		t.Fatalf("records after the restart: %v", got)
	}
	r.Close()
}

func TestRedisRefusesBadURLsAndForeignState(t *testing.T) {
	for _, u := range []string{"http://127.0.0.1:6379", "redis://127.0.0.1:1/0?prefix=a%20b"} {
		if _, err := state.OpenRedis(context.Background(), u); err == nil {
			t.Errorf("OpenRedis(%q) succeeded", u)
		}
	}
	srv := redistest.Start(t)
	c := goredis.NewClient(&goredis.Options{Addr: srv.Addr()})
	defer c.Close()
	c.Set(context.Background(), "other:format", "someone-else/9", 0)
	if _, err := state.OpenRedis(context.Background(), "redis://"+srv.Addr()+"/0?prefix=other"); err == nil || !strings.Contains(err.Error(), "someone-else/9") {
		t.Fatalf("a prefix holding another format: %v", err)
	}
	if _, err := state.OpenRedis(context.Background(), "redis://:secret@127.0.0.1:1/0"); err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("unreachable server: %v (the password must not be shown)", err)
	}
}

// TestRedisHonoursTheContext: with the server paused (CLIENT PAUSE, 1.5 s), an append whose
// context ends after 100 ms fails as unavailable by a timeout on the socket, the context's
// deadline applied to the read. Without ContextTimeoutEnabled (which a redis:// URL cannot set)
// go-redis waits out the pause on the socket and only then reports the context's own error
// (context.DeadlineExceeded), after the script ran: which error comes back says which wait
// happened, with no timing in the test.
func TestRedisHonoursTheContext(t *testing.T) {
	srv := redistest.Start(t)
	r := openRedis(t, srv.URL())
	defer r.Close()
	admin := goredis.NewClient(&goredis.Options{Addr: srv.Addr()})
	defer admin.Close()
	if err := admin.Do(context.Background(), "CLIENT", "PAUSE", "1500", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := r.Append(ctx, [][]byte{[]byte("late")})
	var ne net.Error
	if !errors.Is(err, state.ErrUnavailable) || !errors.As(err, &ne) || !ne.Timeout() || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("append past its deadline: %v, want unavailable by a timeout", err)
	}
}
