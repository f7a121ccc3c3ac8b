package manager

import (
	"io/fs"
	"testing"
)

func TestRuntimeSettings(t *testing.T) {
	v2, v1 := cgroupMemoryLimitFiles[0], cgroupMemoryLimitFiles[1]
	tests := []struct {
		name         string
		env          map[string]string
		files        map[string]string
		wantGC       int
		wantMemLimit int64
	}{
		{name: "nothing set, no cgroup", wantGC: DefaultGCPercent, wantMemLimit: -1},
		{name: "cgroup v2 limit", files: map[string]string{v2: "268435456\n"}, wantGC: DefaultGCPercent, wantMemLimit: 241591910},
		{name: "cgroup v2 unlimited", files: map[string]string{v2: "max\n"}, wantGC: DefaultGCPercent, wantMemLimit: -1},
		{name: "cgroup v1 limit", files: map[string]string{v1: "1073741824"}, wantGC: DefaultGCPercent, wantMemLimit: 966367641},
		{name: "cgroup v1 unlimited", files: map[string]string{v1: "9223372036854771712"}, wantGC: DefaultGCPercent, wantMemLimit: -1},
		{name: "garbage", files: map[string]string{v2: "lots"}, wantGC: DefaultGCPercent, wantMemLimit: -1},
		{name: "GOGC set wins", env: map[string]string{"GOGC": "200"}, files: map[string]string{v2: "268435456"}, wantGC: -1, wantMemLimit: 241591910},
		{name: "GOMEMLIMIT set wins", env: map[string]string{"GOMEMLIMIT": "100MiB"}, files: map[string]string{v2: "268435456"}, wantGC: DefaultGCPercent, wantMemLimit: -1},
		{name: "both set", env: map[string]string{"GOGC": "off", "GOMEMLIMIT": "1GiB"}, wantGC: -1, wantMemLimit: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string { return tt.env[k] }
			read := func(f string) ([]byte, error) {
				if s, ok := tt.files[f]; ok {
					return []byte(s), nil
				}
				return nil, fs.ErrNotExist
			}
			gc, limit := runtimeSettings(getenv, read)
			if gc != tt.wantGC || limit != tt.wantMemLimit {
				t.Errorf("got GC %d, limit %d; want %d, %d", gc, limit, tt.wantGC, tt.wantMemLimit)
			}
		})
	}
}
