package report_test

import (
	"bytes"
	"context"
	"flag"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var screenshots = flag.Bool("screenshots", false, "rewrite the docs/report-*.png screenshots from the golden pages")

// page is a golden file the browser loads, and what its DOM must hold.
type pageCheck struct {
	file string
	// points are the data-system values of the plot's points, in any
	// order (a PR plot has one per system per side).
	points []string
	// frontier: the page draws a frontier path.
	frontier bool
	// contains are strings the rendered DOM must hold.
	contains []string
	// doc is the screenshot under docs/ this page provides, and its height.
	doc    string
	height int
}

var pageChecks = []pageCheck{
	{file: "ticket-triage", points: []string{"cheap-single", "frontier-single", "escalating"}, frontier: true,
		contains: []string{"Case matrix", "receipt"}, doc: "report-bench.png", height: 1180},
	{file: "invoice-extraction", points: []string{"extract-once", "extract-reviewed"}, frontier: true},
	{file: "intent-select", contains: []string{`class="decided"`, "organism:assay-intent-cascade"}, doc: "report-foundry.png", height: 1000},
	{file: "code-normalizer", contains: []string{"Lineage", `class="decided"`}},
	{file: "pr", points: []string{"cheap-single", "cheap-single", "frontier-single", "frontier-single", "escalating", "escalating"}, frontier: true,
		contains: []string{`class="arrow"`, "Left the Pareto set", "Work accounting only", "Ranking at head"}, doc: "report-pr.png", height: 1700},
}

// chromium finds Debian's headless browser.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed here (.ci/run installs Debian's chromium package); the pages were not loaded in a browser")
	return ""
}

func browse(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return stdout.Bytes()
}

var pointPattern = regexp.MustCompile(`<circle class="point[^"]*" data-system="([^"]*)"`)

// Each page, loaded from disk in headless Chromium, renders something
// (the screenshot is not blank) and its DOM holds one point per system and
// the frontier path.
func TestPagesInBrowser(t *testing.T) {
	t.Parallel()
	bin := chromium(t)
	for _, pc := range pageChecks {
		t.Run(pc.file, func(t *testing.T) {
			// The golden file is named NAME.golden (Go's convention for
			// expected output); the browser is given a copy named .html so
			// it takes the bytes as a page, not by sniffing.
			page, err := os.ReadFile(filepath.Join("testdata", pc.file+".golden"))
			if err != nil {
				t.Fatal(err)
			}
			abs := filepath.Join(t.TempDir(), pc.file+".html")
			if err := os.WriteFile(abs, page, 0o644); err != nil {
				t.Fatal(err)
			}
			url := "file://" + abs
			dom := string(browse(t, bin, "--dump-dom", url))
			var got []string
			for _, m := range pointPattern.FindAllStringSubmatch(dom, -1) {
				got = append(got, m[1])
			}
			if strings.Join(sorted(got), ",") != strings.Join(sorted(pc.points), ",") {
				t.Errorf("points %v, want %v", got, pc.points)
			}
			if has := strings.Contains(dom, `<path class="frontier`); has != pc.frontier {
				t.Errorf("frontier path drawn: %v, want %v", has, pc.frontier)
			}
			for _, want := range pc.contains {
				if !strings.Contains(dom, want) {
					t.Errorf("DOM lacks %q", want)
				}
			}

			height := pc.height
			if height == 0 {
				height = 900
			}
			shot := filepath.Join(t.TempDir(), "shot.png")
			browse(t, bin, "--screenshot="+shot, "--window-size=1280,"+strconv.Itoa(height), url)
			data, err := os.ReadFile(shot)
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			b := img.Bounds()
			if b.Dx() != 1280 {
				t.Errorf("screenshot is %d px wide, want 1280", b.Dx())
			}
			colours := map[[3]uint32]bool{}
			inked := 0
			for y := b.Min.Y; y < b.Max.Y; y += 2 {
				for x := b.Min.X; x < b.Max.X; x += 2 {
					r, g, bl, _ := img.At(x, y).RGBA()
					colours[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
					if r < 0xf000 || g < 0xf000 || bl < 0xf000 {
						inked++
					}
				}
			}
			total := (b.Dx() / 2) * (b.Dy() / 2)
			if inked*50 < total || len(colours) < 16 {
				t.Errorf("screenshot looks blank: %d of %d sampled pixels inked, %d colours", inked, total, len(colours))
			}
			if *screenshots && pc.doc != "" {
				if err := os.WriteFile(filepath.Join("..", "docs", pc.doc), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
