package recovery_test

import (
	"math"
	"strings"
	"testing"

	"octet.dev/host/fsm/recovery"
)

var (
	throttled = status(429)
	outage    = recovery.Facts{Kind: recovery.FailConnect}
)

func retryAfter(ms int64) recovery.Facts {
	return with(status(429), func(f *recovery.Facts) { f.RetryAfterMS = ms })
}

func TestDelay(t *testing.T) {
	p := recovery.DefaultPolicy()
	tests := []struct {
		name    string
		f       recovery.Facts
		attempt int
		jitter  float64
		want    int64
		fatal   bool
	}{
		// Retry-After (retry-after-ms or Retry-After, parsed by the edge):
		// exactly the server's wish, no jitter, no backoff cap.
		{"retry-after 1 ms", retryAfter(1), 1, 0.5, 1, false},
		{"retry-after 1.5 s", retryAfter(1500), 1, 0.9, 1500, false},
		{"retry-after on the 4th retry", retryAfter(1500), 4, 0, 1500, false},
		{"retry-after above the backoff cap", retryAfter(45_000), 1, 0, 45_000, false},
		{"retry-after at the ceiling", retryAfter(recovery.DefaultRetryAfterCeilingMS), 1, 0, recovery.DefaultRetryAfterCeilingMS, false},
		{"retry-after above the ceiling", retryAfter(recovery.DefaultRetryAfterCeilingMS + 1), 1, 0, 0, true},
		{"retry-after of an hour", retryAfter(3_600_000), 1, 0, 0, true},
		{"retry-after on a 503", with(status(503), func(f *recovery.Facts) { f.RetryAfterMS = 5000 }), 2, 0.3, 5000, false},
		{"retry-after 0 means none", retryAfter(0), 1, 0, 250, false},
		{"negative retry-after means none", retryAfter(-10), 1, 0, 250, false},

		// Backoff: ceiling e = min(30 s, 500 ms·2^(n-1)), delay in [e/2, e].
		{"retry 1 min", throttled, 1, 0, 250, false},
		{"retry 1 max", throttled, 1, 0.9999, 500, false},
		{"retry 1 mid", throttled, 1, 0.5, 375, false},
		{"retry 2 min", throttled, 2, 0, 500, false},
		{"retry 2 max", throttled, 2, 0.9999, 1000, false},
		{"retry 3", throttled, 3, 0, 1000, false},
		{"retry 4", throttled, 4, 0, 2000, false},
		{"retry 4 max", throttled, 4, 0.9999, 4000, false},
		{"retry 6 max", throttled, 6, 0.9999, 16_000, false},
		{"retry 7 capped", throttled, 7, 0, 15_000, false},
		{"retry 7 capped max", throttled, 7, 0.99999, 30_000, false},
		{"retry 1000 capped", throttled, 1000, 0.99999, 30_000, false},
		{"retry 7 just below the max", throttled, 7, 0.9999, 29_999, false},
		{"attempt 0 is the first", throttled, 0, 0, 250, false},
		{"negative attempt is the first", throttled, -3, 0, 250, false},
		{"jitter 1 is the max", throttled, 1, 1, 500, false},
		{"jitter above 1 is the max", throttled, 1, 7, 500, false},
		{"negative jitter is the min", throttled, 1, -0.5, 250, false},
		{"NaN jitter is the min", throttled, 1, math.NaN(), 250, false},
		{"+Inf jitter is the max", throttled, 1, math.Inf(1), 500, false},
		{"cut", recovery.Facts{Kind: recovery.FailStreamCut, RequestWritten: true}, 2, 0, 500, false},
		{"overloaded event", event("overloaded_error"), 3, 0.9999, 2000, false},

		// Network waits: 1 s·2^(n-1) capped at 10 s, delay in [e/2, e].
		{"network 1 min", outage, 1, 0, 500, false},
		{"network 1 max", outage, 1, 0.9999, 1000, false},
		{"network 2", outage, 2, 0, 1000, false},
		{"network 4 max", outage, 4, 0.9999, 8000, false},
		{"network 5 capped", outage, 5, 0, 5000, false},
		{"network 5 capped max", outage, 5, 0.9999, 10_000, false},
		{"network 10000", outage, 10_000, 0.5, 7500, false},

		// Fatal failures have nothing to wait for.
		{"fatal 401", status(401), 1, 0, 0, true},
		{"fatal quota with retry-after", with(retryAfter(1000), func(f *recovery.Facts) { f.Code = "insufficient_quota" }), 1, 0, 0, true},
		{"fatal canceled", recovery.Facts{Kind: recovery.FailCanceled}, 1, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, fatal := recovery.Delay(p, tt.f, tt.attempt, tt.jitter)
			if got != tt.want || fatal != tt.fatal {
				t.Errorf("Delay(%+v, %d, %v) = %d, %v; want %d, %v", tt.f, tt.attempt, tt.jitter, got, fatal, tt.want, tt.fatal)
			}
		})
	}
}

// TestDelayRange: every backoff delay is a whole number of milliseconds in
// [e/2, e], at least 1 ms, non-decreasing in the jitter, jitter 0 giving
// the minimum; odd and extreme policies included.
func TestDelayRange(t *testing.T) {
	policies := []recovery.Backoff{
		{BaseMS: 2, Factor: 1, CapMS: 2},
		{BaseMS: 3, Factor: 3, CapMS: 100},
		{BaseMS: 500, Factor: 2, CapMS: 30_000},
		{BaseMS: 1 << 40, Factor: 1 << 20, CapMS: math.MaxInt64},
		{BaseMS: 7, Factor: math.MaxInt64, CapMS: math.MaxInt64 / 2},
	}
	for _, b := range policies {
		p := recovery.DefaultPolicy()
		p.Retry = b
		if err := p.Validate(); err != nil {
			t.Fatalf("%+v: %v", b, err)
		}
		for n := 1; n <= 80; n++ {
			e := b.BaseMS
			for i := 1; i < n && e < b.CapMS; i++ {
				if e > b.CapMS/b.Factor {
					e = b.CapMS
				} else {
					e *= b.Factor
				}
			}
			e = min(e, b.CapMS)
			prev := int64(-1)
			for _, j := range []float64{0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.999999, 1} {
				d, fatal := recovery.Delay(p, throttled, n, j)
				if fatal || d < e/2 || d > e || d < 1 || d < prev {
					t.Fatalf("%+v attempt %d jitter %v: %d (fatal %v), want in [%d, %d], ≥ %d", b, n, j, d, fatal, e/2, e, prev)
				}
				if j == 0 && d != e/2 {
					t.Fatalf("%+v attempt %d: jitter 0 gives %d, want the minimum %d", b, n, d, e/2)
				}
				prev = d
			}
		}
	}
}

func TestPolicyValidate(t *testing.T) {
	if err := recovery.DefaultPolicy().Validate(); err != nil {
		t.Fatalf("default policy: %v", err)
	}
	if err := recovery.DefaultConfig().Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	c := recovery.DefaultConfig()
	if c.MaxAttempts != 4 || c.MaxNetworkWaitMS != nil {
		t.Errorf("defaults: %+v", c)
	}
	// The zero value is refused, with every problem named at once.
	err := recovery.Config{}.Validate()
	if err == nil {
		t.Fatal("zero Config validated")
	}
	for _, want := range []string{"Retry.BaseMS", "Retry.Factor", "Network.BaseMS", "Network.Factor"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("zero Config: %v does not name %s", err, want)
		}
	}
	bad := recovery.DefaultConfig()
	bad.MaxAttempts = -1
	bad.MaxNetworkWaitMS = ptr(-5)
	bad.Policy.Retry.CapMS = 1
	bad.Policy.RetryAfterCeilingMS = -1
	err = bad.Validate()
	for _, want := range []string{"MaxAttempts", "MaxNetworkWaitMS", "Retry.CapMS", "RetryAfterCeilingMS"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("bad Config: %v does not name %s", err, want)
		}
	}
	if _, err := recovery.New(bad); err == nil {
		t.Error("New accepted an invalid config")
	}
	// Zero attempts and a zero wait are valid: retrying and waiting off.
	off := recovery.DefaultConfig()
	off.MaxAttempts = 0
	off.MaxNetworkWaitMS = ptr(0)
	if err := off.Validate(); err != nil {
		t.Errorf("retries and waiting disabled: %v", err)
	}
}
