package main

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/edgeplane/edgeplane/internal/testsupport/k8sbin"
)

func TestParsePlatforms(t *testing.T) {
	got, err := parsePlatforms("linux/amd64,linux/arm64")
	if err != nil || len(got) != 2 || !got[0].Equals(v1.Platform{OS: "linux", Architecture: "amd64"}) ||
		!got[1].Equals(v1.Platform{OS: "linux", Architecture: "arm64"}) {
		t.Errorf("parsePlatforms = %v, %v", got, err)
	}
	for _, bad := range []string{"windows/amd64", "linux/arm/v7", "linux/amd64,", ""} {
		if _, err := parsePlatforms(bad); err == nil {
			t.Errorf("parsePlatforms(%q) = nil error, want one", bad)
		}
	}
}

func TestSelectSpecs(t *testing.T) {
	root, err := k8sbin.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	names := func(only string) ([]string, error) {
		specs, err := selectSpecs(root, only)
		var out []string
		for _, s := range specs {
			out = append(out, s.Name)
		}
		return out, err
	}
	if got, err := names(""); err != nil || !slices.Equal(got, []string{"edgeplane", "pause", "podreport"}) {
		t.Errorf("all images: %q, %v", got, err)
	}
	if got, err := names("podreport,pause"); err != nil || !slices.Equal(got, []string{"podreport", "pause"}) {
		t.Errorf("two images: %q, %v", got, err)
	}
	if _, err := names("busybox"); err == nil || !strings.Contains(err.Error(), "unknown image") {
		t.Errorf("an unknown image: %v, want an error naming it", err)
	}
}

func TestRunNeedsSomethingToWrite(t *testing.T) {
	if err := run(context.Background(), io.Discard, "", "", "linux/amd64", "", "bin/image/build", ""); err == nil {
		t.Error("run without -layout or -tarballs: no error")
	}
}
