package decide

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ParseMillis parses a detach-started-at label (Unix milliseconds).
func ParseMillis(v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, errors.New("empty")
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ms <= 0 {
		return time.Time{}, fmt.Errorf("detach start %q is no positive Unix millisecond time", v)
	}
	return time.UnixMilli(ms).UTC(), nil
}
