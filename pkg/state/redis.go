package state

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is the Store that several `rated serve` replicas share (state.Shared): the log is a
// Redis stream whose entry ids are the sequence numbers ("<seq>-0"), the counter a string key,
// the snapshot a hash; every change is one Lua script, so it is atomic on the server and no
// update of one replica can overwrite another's. Keys are prefixed (default "rated"), so one
// Redis database can hold several states:
//
//	<prefix>:format   "rated-state/1", checked on open
//	<prefix>:seq      the last sequence number handed out
//	<prefix>:log      the stream of records (field "r")
//	<prefix>:snap     hash {seq, data}: the snapshot; records up to seq are trimmed
//	<prefix>:claim:S  hash of the claims of set S (reports of a decision, tool indices, starts)
//	<prefix>:blob:K   short-lived values (pending decisions), with a TTL
//
// Durability is Redis's: an acknowledged append survives a crash of the Redis server only when
// it runs with appendonly yes and appendfsync always (Redis then fsyncs its AOF before it
// answers; many commands of one event-loop turn share one fsync, which is Redis's own group
// commit). Durability reports what the server is configured with.
type Redis struct {
	client     *redis.Client
	prefix     string
	addr       string
	closed     atomic.Bool
	durability string
	durable    bool
}

var _ Shared = (*Redis)(nil)

// redisFormat is written on creation and checked on open.
const redisFormat = "rated-state/1"

// errSeqReply opens the error the snapshot script returns for a snapshot beyond the log.
const errSeqReply = "RATEDSEQ"

// IsRedisURL reports whether s names a Redis state (redis:// or rediss://).
func IsRedisURL(s string) bool {
	return strings.HasPrefix(s, "redis://") || strings.HasPrefix(s, "rediss://")
}

// OpenRedis connects to the Redis state at rawURL: redis://[user:password@]host:port/db, with
// an optional prefix=NAME query parameter (default "rated") and go-redis's own options
// (dial_timeout=1s, read_timeout=…, pool_size=…). It checks that the server answers and that the
// prefix holds a rated state of this format, or nothing yet.
func OpenRedis(ctx context.Context, rawURL string) (*Redis, error) {
	u, err := url.Parse(rawURL)
	if err != nil || !IsRedisURL(rawURL) {
		return nil, fmt.Errorf("redis state %q: not a redis:// URL", redactURL(rawURL))
	}
	q := u.Query()
	prefix := q.Get("prefix")
	q.Del("prefix")
	if prefix == "" {
		prefix = "rated"
	}
	if strings.ContainsAny(prefix, " \t\r\n{}") {
		return nil, fmt.Errorf("redis state %q: prefix %q must not contain spaces or braces", redactURL(rawURL), prefix)
	}
	u.RawQuery = q.Encode()
	opts, err := redis.ParseURL(u.String())
	if err != nil {
		return nil, fmt.Errorf("redis state %q: %w", redactURL(rawURL), err)
	}
	// No client-side retries: a script that ran but whose answer was lost must not run twice.
	// The router retries on its own terms (claims make a retried report a duplicate).
	opts.MaxRetries = -1
	// A request's deadline or cancellation must end its wait on the socket; without this the
	// client waits out ReadTimeout (3 s) whatever the context says, and redis:// URLs cannot
	// set it.
	opts.ContextTimeoutEnabled = true
	if q.Get("dial_timeout") == "" {
		opts.DialTimeout = 2 * time.Second
	}
	r := &Redis{client: redis.NewClient(opts), prefix: prefix, addr: opts.Addr}
	if err := r.client.Ping(ctx).Err(); err != nil {
		r.client.Close()
		return nil, fmt.Errorf("redis state %s: %w", r.Where(), err)
	}
	if err := r.checkFormat(ctx); err != nil {
		r.client.Close()
		return nil, err
	}
	r.readDurability(ctx)
	return r, nil
}

// redactURL drops the password of a URL for messages.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

func (r *Redis) key(parts ...string) string { return r.prefix + ":" + strings.Join(parts, ":") }

// Where names the server and prefix for messages ("127.0.0.1:6379 prefix rated").
func (r *Redis) Where() string { return r.addr + " prefix " + r.prefix }

func (r *Redis) checkFormat(ctx context.Context) error {
	k := r.key("format")
	if err := r.client.SetNX(ctx, k, redisFormat, 0).Err(); err != nil {
		return r.classify("open", err)
	}
	got, err := r.client.Get(ctx, k).Result()
	if err != nil {
		return r.classify("open", err)
	}
	if got != redisFormat {
		return fmt.Errorf("redis state %s holds format %q, this build reads %q", r.Where(), got, redisFormat)
	}
	return nil
}

// readDurability asks the server how it persists (CONFIG may be disabled on managed servers).
func (r *Redis) readDurability(ctx context.Context) {
	cfg, err := r.client.ConfigGet(ctx, "append*").Result()
	if err != nil {
		r.durability = "unknown (CONFIG GET refused: " + err.Error() + ")"
		return
	}
	r.durable = cfg["appendonly"] == "yes" && cfg["appendfsync"] == "always"
	r.durability = fmt.Sprintf("appendonly %s, appendfsync %s", cfg["appendonly"], cfg["appendfsync"])
}

// Durability describes how the server persists and whether every acknowledged append survives a
// crash of the server (appendonly yes, appendfsync always).
func (r *Redis) Durability() (description string, crashSafe bool) { return r.durability, r.durable }

// classify names the store in err and wraps Redis's out-of-memory refusal with ErrFull.
func (r *Redis) classify(what string, err error) error {
	if err == nil {
		return nil
	}
	if r.closed.Load() || errors.Is(err, redis.ErrClosed) {
		return ErrClosed
	}
	if strings.HasPrefix(err.Error(), "OOM ") {
		return fmt.Errorf("%w: %s redis state %s: %w", ErrFull, what, r.Where(), err)
	}
	var reply redis.Error
	if !errors.As(err, &reply) || strings.HasPrefix(err.Error(), "LOADING ") || strings.HasPrefix(err.Error(), "MASTERDOWN ") {
		// Not an answer of the server (refused, reset, timed out) or a server not ready yet.
		return fmt.Errorf("%w: %s redis state %s: %w", ErrUnavailable, what, r.Where(), err)
	}
	return fmt.Errorf("%s redis state %s: %w", what, r.Where(), err)
}

// appendScript appends the batches whose claims are free. KEYS: seq, log, then the claim sets.
// ARGV: the number of batches, then per batch: its record count n, its claim count m, n
// records, and m claims as (index into KEYS, field, value, ttl ms). It returns the last sequence
// number followed by each batch's status (0 appended, 1 duplicate, 2 conflict).
var appendScript = redis.NewScript(`
local last = tonumber(redis.call('GET', KEYS[1]) or '0')
local i = 1
local nb = tonumber(ARGV[i]); i = i + 1
local out = {0}
local appended = 0
for b = 1, nb do
  local nrec, ncl = tonumber(ARGV[i]), tonumber(ARGV[i + 1]); i = i + 2
  local recs = i; i = i + nrec
  local cls = i; i = i + 4 * ncl
  local new, same, other = 0, 0, 0
  for c = 0, ncl - 1 do
    local at = cls + 4 * c
    local cur = redis.call('HGET', KEYS[tonumber(ARGV[at])], ARGV[at + 1])
    if not cur then new = new + 1 elseif cur == ARGV[at + 2] then same = same + 1 else other = other + 1 end
  end
  local st = 0
  if other > 0 or (same > 0 and new > 0) then st = 2 elseif same > 0 then st = 1 end
  if st == 0 then
    for c = 0, ncl - 1 do
      local at = cls + 4 * c
      local k = KEYS[tonumber(ARGV[at])]
      redis.call('HSET', k, ARGV[at + 1], ARGV[at + 2])
      local ttl = tonumber(ARGV[at + 3])
      if ttl > 0 then redis.call('PEXPIRE', k, ttl) end
    end
    for r = 0, nrec - 1 do
      last = last + 1
      redis.call('XADD', KEYS[2], string.format('%d-0', last), 'r', ARGV[recs + r])
    end
    appended = appended + nrec
  end
  out[b + 1] = st
end
if appended > 0 then redis.call('SET', KEYS[1], string.format('%d', last)) end
out[1] = last
return out
`)

// snapshotScript stores a snapshot unless an older one than the stored is offered, then trims the
// records it covers. KEYS: seq, log, snap. ARGV: seq, data. Returns 1 stored, 0 ignored.
var snapshotScript = redis.NewScript(`
local last = tonumber(redis.call('GET', KEYS[1]) or '0')
local seq = tonumber(ARGV[1])
if seq > last then return redis.error_reply('` + errSeqReply + ` snapshot at ' .. ARGV[1] .. ', log ends at ' .. last) end
local cur = redis.call('HGET', KEYS[3], 'seq')
if cur and tonumber(cur) > seq then return 0 end
redis.call('HSET', KEYS[3], 'seq', ARGV[1], 'data', ARGV[2])
redis.call('XTRIM', KEYS[2], 'MINID', string.format('%d-0', seq + 1))
return 1
`)

// Append implements Store: one script, so the records are contiguous and atomic.
func (r *Redis) Append(ctx context.Context, records [][]byte) (uint64, error) {
	last, _, err := r.AppendBatches(ctx, []Batch{{Records: records}})
	return last, err
}

// AppendBatches implements Shared.
func (r *Redis) AppendBatches(ctx context.Context, batches []Batch) (uint64, []ClaimStatus, error) {
	if err := ctx.Err(); err != nil {
		return 0, nil, err
	}
	if r.closed.Load() {
		return 0, nil, ErrClosed
	}
	keys := []string{r.key("seq"), r.key("log")}
	setIndex := map[string]int{}
	args := []any{len(batches)}
	for _, b := range batches {
		args = append(args, len(b.Records), len(b.Claims))
		for _, rec := range b.Records {
			args = append(args, rec)
		}
		for _, c := range b.Claims {
			ix, ok := setIndex[c.Set]
			if !ok {
				keys = append(keys, r.key("claim", c.Set))
				ix = len(keys)
				setIndex[c.Set] = ix
			}
			args = append(args, ix, c.Field, c.Value, c.TTL.Milliseconds())
		}
	}
	res, err := appendScript.Run(ctx, r.client, keys, args...).Int64Slice()
	if err != nil {
		return 0, nil, r.classify("append to", err)
	}
	if len(res) != len(batches)+1 {
		return 0, nil, fmt.Errorf("append to redis state %s: %d results for %d batches", r.Where(), len(res), len(batches))
	}
	status := make([]ClaimStatus, len(batches))
	for i := range status {
		status[i] = ClaimStatus(res[i+1])
	}
	return uint64(res[0]), status, nil
}

// redisPage is the number of records one XRANGE reads.
const redisPage = 1024

// Records implements Store: the stream is read a page at a time, so a long log is never held
// whole in memory, and records appended during the walk are included. Asked for records after a
// sequence number that a snapshot covers when none are left, it returns ErrTrimmed.
func (r *Redis) Records(ctx context.Context, after uint64, fn func(seq uint64, rec []byte) error) error {
	if r.closed.Load() {
		return ErrClosed
	}
	start := strconv.FormatUint(after+1, 10) + "-0"
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		msgs, err := r.client.XRangeN(ctx, r.key("log"), start, "+", redisPage).Result()
		if err != nil {
			return r.classify("read", err)
		}
		if len(msgs) == 0 && start == strconv.FormatUint(after+1, 10)+"-0" {
			// Nothing after `after`: either nothing new, or a snapshot beyond it trimmed everything.
			snap, err := r.client.HGet(ctx, r.key("snap"), "seq").Uint64()
			if err != nil && !errors.Is(err, redis.Nil) {
				return r.classify("read", err)
			}
			if snap > after {
				return fmt.Errorf("%w: redis state %s: asked for the records after %d, the snapshot covers up to %d", ErrTrimmed, r.Where(), after, snap)
			}
		}
		var seq uint64
		for _, m := range msgs {
			s, _, ok := strings.Cut(m.ID, "-")
			if !ok {
				return fmt.Errorf("redis state %s: log entry id %q is not a sequence number", r.Where(), m.ID)
			}
			if seq, err = strconv.ParseUint(s, 10, 64); err != nil {
				return fmt.Errorf("redis state %s: log entry id %q: %w", r.Where(), m.ID, err)
			}
			rec, ok := m.Values["r"].(string)
			if !ok {
				return fmt.Errorf("redis state %s: log entry %s has no record", r.Where(), m.ID)
			}
			if err := fn(seq, []byte(rec)); err != nil {
				return err
			}
		}
		if len(msgs) < redisPage {
			return nil
		}
		start = strconv.FormatUint(seq+1, 10) + "-0"
	}
}

// SaveSnapshot implements Store; a snapshot older than the stored one is ignored (Shared).
func (r *Redis) SaveSnapshot(ctx context.Context, seq uint64, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if r.closed.Load() {
		return ErrClosed
	}
	err := snapshotScript.Run(ctx, r.client, []string{r.key("seq"), r.key("log"), r.key("snap")}, seq, data).Err()
	if err != nil && strings.HasPrefix(err.Error(), errSeqReply) {
		return fmt.Errorf("%w: redis state %s: %s", ErrSequence, r.Where(), strings.TrimPrefix(err.Error(), errSeqReply+" "))
	}
	return r.classify("snapshot to", err)
}

// LoadSnapshot implements Store.
func (r *Redis) LoadSnapshot(ctx context.Context) (uint64, []byte, bool, error) {
	if r.closed.Load() {
		return 0, nil, false, ErrClosed
	}
	vals, err := r.client.HMGet(ctx, r.key("snap"), "seq", "data").Result()
	if err != nil {
		return 0, nil, false, r.classify("load snapshot from", err)
	}
	s, ok1 := vals[0].(string)
	d, ok2 := vals[1].(string)
	if !ok1 || !ok2 {
		return 0, nil, false, nil
	}
	seq, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, nil, false, fmt.Errorf("redis state %s: snapshot sequence %q is corrupt", r.Where(), s)
	}
	return seq, []byte(d), true, nil
}

// PutBlobs implements Shared: one pipeline of SETs (with appendfsync always, Redis fsyncs
// before it answers, so a batch of blobs shares its fsyncs).
func (r *Redis) PutBlobs(ctx context.Context, blobs []Blob, ttl time.Duration) error {
	if r.closed.Load() {
		return ErrClosed
	}
	if ttl <= 0 {
		return fmt.Errorf("redis state %s: blobs need a TTL", r.Where())
	}
	_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, b := range blobs {
			p.Set(ctx, r.key("blob", b.Key), b.Data, ttl)
		}
		return nil
	})
	return r.classify("put blobs to", err)
}

// GetBlob implements Shared.
func (r *Redis) GetBlob(ctx context.Context, key string) ([]byte, bool, error) {
	if r.closed.Load() {
		return nil, false, ErrClosed
	}
	v, err := r.client.Get(ctx, r.key("blob", key)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, r.classify("get blob from", err)
	}
	return v, true, nil
}

// Close implements Store.
func (r *Redis) Close() error {
	if !r.closed.CompareAndSwap(false, true) {
		return nil
	}
	return r.client.Close()
}
