package main

import (
	"regexp"
	"strings"
)

// breakingBullets returns the bullets of the changelog's "### Breaking" under "## [Unreleased]",
// each with its continuation lines joined to it.
func breakingBullets(changelog string) []string {
	var bullets []string
	inUnreleased, inBreaking := false, false
	for _, line := range strings.Split(changelog, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "## "):
			inUnreleased = strings.HasPrefix(strings.TrimSpace(line[3:]), "[Unreleased]")
			inBreaking = false
		case strings.HasPrefix(line, "### "):
			inBreaking = inUnreleased && strings.TrimSpace(line[4:]) == "Breaking"
		case !inBreaking:
		case strings.HasPrefix(line, "- "), strings.HasPrefix(line, "* "):
			bullets = append(bullets, trimmed[2:])
		case trimmed == "":
		case len(bullets) > 0 && (strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")):
			bullets[len(bullets)-1] += " " + trimmed
		}
	}
	return bullets
}

// quoted finds the words in backticks in oasdiff's text of a change.
var quoted = regexp.MustCompile("`[^`]+`")

// status is a response status as oasdiff's texts quote it: a bullet need not repeat those,
// since a change usually comes once for each status of the same property.
var status = regexp.MustCompile("^`([1-5][0-9X]{2}|default)`$")

// missing returns the words a bullet must name, in backticks, to list the change f of the
// document doc: the document's file name, the change's id, and every word oasdiff's text
// quotes except a response status. It is nil when one bullet names them all; otherwise it is
// what the closest bullet of the document lacks.
func missing(bullets []string, doc string, f finding) []string {
	need := []string{"`" + doc + "`", "`" + f.ID + "`"}
	for _, word := range quoted.FindAllString(f.Text, -1) {
		if !status.MatchString(word) {
			need = append(need, word)
		}
	}
	best := need
	for _, b := range bullets {
		if !strings.Contains(b, need[0]) {
			continue // another document's: what it lacks would mislead
		}
		var lacks []string
		for _, word := range need {
			if !strings.Contains(b, word) {
				lacks = append(lacks, word)
			}
		}
		if len(lacks) < len(best) {
			best = lacks
		}
	}
	if len(best) == 0 {
		return nil
	}
	return best
}
