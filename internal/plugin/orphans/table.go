package orphans

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"
)

// PrintTable writes findings as a kubectl-style table, then a summary line.
// wide adds the action and what the address is attached to; ages are
// measured at now.
func PrintTable(w io.Writer, fs []Finding, wide bool, now time.Time) error {
	if len(fs) == 0 {
		_, err := fmt.Fprintln(w, "No orphaned cloud addresses found.")
		return err
	}
	tw := tabwriter.NewWriter(w, 3, 0, 3, ' ', 0)
	cols := []string{"PROVIDER-CONFIG", "PROVIDER", "ADDRESS-ID", "PUBLIC-IP", "OWNER-TAG", "REASON", "AGE"}
	if wide {
		cols = append(cols, "ACTION", "ATTACHED-TO")
	}
	if _, err := fmt.Fprintln(tw, strings.Join(cols, "\t")); err != nil {
		return fmt.Errorf("writing the table: %w", err)
	}
	orphans := 0
	for _, f := range fs {
		if f.Action != "Keep" {
			orphans++
		}
		age := "<unknown>"
		if f.Created != nil {
			age = duration.HumanDuration(now.Sub(*f.Created))
		}
		cells := []string{f.ProviderConfig, f.Provider, f.AddressID, none(f.PublicIP), none(f.OwnerTag), f.Reason, age}
		if wide {
			cells = append(cells, f.Action, none(f.AttachedTo))
		}
		if _, err := fmt.Fprintln(tw, strings.Join(cells, "\t")); err != nil {
			return fmt.Errorf("writing the table: %w", err)
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing the table: %w", err)
	}
	_, err := fmt.Fprintf(w, "%d orphaned, %d unowned within the grace period\n", orphans, len(fs)-orphans)
	return err
}

func none(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
