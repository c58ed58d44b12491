package engine

import (
	"octet.dev/host/protocol"

	"math"
	"strconv"
	"testing"
	"time"
)

// A timeout_ms above the operator's limit is clamped to it, however large:
// 2^63-1 ms used to overflow to a negative duration,
// which the shell refused ("could not be started").
func TestBashHugeTimeoutIsClamped(t *testing.T) {
	huge := []int64{math.MaxInt64, math.MaxInt64/int64(time.Millisecond) + 1, 1 << 62}
	var cs []ToolCall
	for i, ms := range huge {
		cs = append(cs, ToolCall{ID: "c" + strconv.Itoa(i), Name: "bash",
			Arguments: `{"command":"echo hi","timeout_ms":` + strconv.FormatInt(ms, 10) + `}`})
	}
	f := shellFixture(t, calls(cs...), text("done"))
	evs, res := f.run(f.req("run"))
	if res.Status != "completed" {
		t.Fatalf("result %+v", res)
	}
	fins := find[protocol.ToolFinish](evs)
	if len(fins) != len(huge) {
		t.Fatalf("%d tool_finish events", len(fins))
	}
	for _, x := range fins {
		if !x.OK || x.Output != "hi\n" {
			t.Errorf("%s: %+v %+v", x.CallID, x, x.Error)
		}
	}
	for _, tc := range []struct {
		operator int64
		asked    *int64
		want     time.Duration
	}{
		{120000, nil, 2 * time.Minute},
		{120000, ptr(int64(50)), 50 * time.Millisecond},
		{120000, ptr(int64(120000)), 2 * time.Minute},
		{120000, ptr(int64(120001)), 2 * time.Minute},
		{120000, ptr(int64(math.MaxInt64)), 2 * time.Minute},
	} {
		if got := bashTimeout(tc.operator, tc.asked); got != tc.want {
			t.Errorf("bashTimeout(%d, %v) = %v, want %v", tc.operator, tc.asked, got, tc.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }
