package check

import (
	"fmt"
	"io"
	"strings"
)

// WriteText writes the report for a reader: one block per section, one
// line per check, then the calibration and the verdict.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	if r.Offline {
		fmt.Fprintf(&b, "agentmemory check — offline: no model configured; showing the offline defaults\n")
	} else {
		fmt.Fprintf(&b, "agentmemory check\n")
	}
	fmt.Fprintf(&b, "models: %s\nstore:  %s\n", r.Models, r.Store)
	for _, s := range r.Sections {
		fmt.Fprintf(&b, "\n%s: %s\n", s.Name, s.Target)
		for _, it := range s.Items {
			fmt.Fprintf(&b, "  %-4s  %-17s  %s\n", it.Status, it.Name, it.Detail)
		}
	}
	if c := r.Calibration; c != nil {
		fmt.Fprintf(&b, "\nsimilarity calibration (%d related and %d unrelated question–memory pairs):\n", c.Related, c.Unrelated)
		fmt.Fprintf(&b, "  related    mean %.3f, lowest  %.3f\n", c.RelatedMean, c.RelatedMin)
		fmt.Fprintf(&b, "  unrelated  mean %.3f, highest %.3f\n", c.UnrelatedMean, c.UnrelatedMax)
		fmt.Fprintf(&b, "  gap %.3f; %.0f%% of related–unrelated couples ordered rightly\n", c.Gap, 100*c.Separation)
		fmt.Fprintf(&b, "  implied cut-off: cosine %.2f (halfway between the means); a fixed threshold near or above %.2f would drop many memories that answer\n",
			c.Threshold, c.RelatedMean)
	}
	if r.OK {
		b.WriteString("\nresult: no check failed\n")
	} else {
		fmt.Fprintf(&b, "\nresult: %d check(s) failed: %s\n", len(r.Failures), strings.Join(r.Failures, "; "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
