package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"
)

// Verdicts of a case.
const (
	verdictPass = "pass"
	verdictFail = "fail"
	verdictSkip = "skip"
)

// result is the outcome of one case: a line of the -json report, a
// testcase of the -junit one.
type result struct {
	Name     string  `json:"name"`
	Level    string  `json:"level"`    // protocol or contract: the case's own level
	Rule     string  `json:"rule"`     // what it checks, as a citation (CONTRACT §N)
	Verdict  string  `json:"verdict"`  // pass, fail or skip
	Evidence string  `json:"evidence"` // why it failed or was skipped; "" when it passed
	Time     float64 `json:"time"`     // seconds the case took
}

// record is what the kit reports a case by: its identity.
type record struct {
	name, level, rule string
}

// report writes a case's outcome as it comes (a text line, or a JSON
// line with -json) and keeps it for the summary and the JUnit file.
func (k *kit) report(rec record, verdict, evidence string, took time.Duration) {
	r := result{Name: rec.name, Level: rec.level, Rule: rec.rule, Verdict: verdict, Evidence: evidence, Time: took.Seconds()}
	k.results = append(k.results, r)
	switch verdict {
	case verdictPass:
		k.passed++
	case verdictFail:
		k.failed++
	default:
		k.skipped++
	}
	if k.cfg.json {
		b, err := json.Marshal(r)
		if err != nil {
			panic(err) // strings and a float: cannot fail
		}
		k.out.Write(append(b, '\n'))
		return
	}
	switch verdict {
	case verdictPass:
		fmt.Fprintf(k.out, "ok    %s\n", r.Name)
	case verdictFail:
		fmt.Fprintf(k.out, "FAIL  %s\n    %s\n", r.Name, strings.ReplaceAll(r.Evidence, "\n", "\n    "))
	default:
		fmt.Fprintf(k.out, "skip  %s (%s)\n", r.Name, r.Evidence)
	}
}

// summary is the line CI reads: "N passed, N failed", then ", N skipped"
// when a case was skipped.
func (k *kit) summary() string {
	s := fmt.Sprintf("%d passed, %d failed", k.passed, k.failed)
	if k.skipped > 0 {
		s += fmt.Sprintf(", %d skipped", k.skipped)
	}
	return s
}

// The JUnit XML report: one testsuite, a testcase per case, with a
// failure or skipped element as its verdict says. Times are seconds.
type junitSuites struct {
	XMLName  xml.Name   `xml:"testsuites"`
	Name     string     `xml:"name,attr"`
	Tests    int        `xml:"tests,attr"`
	Failures int        `xml:"failures,attr"`
	Errors   int        `xml:"errors,attr"`
	Skipped  int        `xml:"skipped,attr"`
	Time     string     `xml:"time,attr"`
	Suites   []junitSet `xml:"testsuite"`
}

type junitSet struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure"`
	Skipped   *junitMessage `xml:"skipped"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

func seconds(s float64) string { return fmt.Sprintf("%.3f", s) }

// writeJUnit writes the results as JUnit XML. A case's classname is its
// group (transcript, fuzz); a failure's type is the rule it broke and its
// message the first line of the evidence.
func (k *kit) writeJUnit(w io.Writer, started time.Time, took time.Duration) error {
	set := junitSet{Name: "octet-conformance", Tests: len(k.results), Failures: k.failed, Skipped: k.skipped,
		Time: seconds(took.Seconds()), Timestamp: started.UTC().Format("2006-01-02T15:04:05"),
		Properties: []junitProperty{{"host", k.cfg.host}, {"level", k.cfg.level}}}
	for _, r := range k.results {
		group, _, _ := strings.Cut(r.Name, "/")
		c := junitCase{Name: r.Name, Classname: "octet-conformance." + group, Time: seconds(r.Time)}
		first, _, _ := strings.Cut(r.Evidence, "\n")
		switch r.Verdict {
		case verdictFail:
			c.Failure = &junitMessage{Message: first, Type: r.Rule, Text: r.Evidence}
		case verdictSkip:
			c.Skipped = &junitMessage{Message: first}
		}
		set.Cases = append(set.Cases, c)
	}
	doc := junitSuites{Name: "octet-conformance", Tests: set.Tests, Failures: set.Failures, Skipped: set.Skipped, Time: set.Time, Suites: []junitSet{set}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
