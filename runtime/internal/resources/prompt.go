package resources

import "strings"

// Prompt formats the context files and the skills for the system prompt,
// after the host's default and before the request's system_prompt. The
// same inputs give the same bytes; "" when there is nothing to add.
func Prompt(contexts []Context, skills []Skill) string {
	var b strings.Builder
	n := 1024
	for _, c := range contexts {
		n += len(c.Label) + len(c.Text) + 32
	}
	for _, k := range skills {
		n += 2*len(k.Name) + len(k.Description) + 32
	}
	b.Grow(n)
	for _, c := range contexts {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("# Project context: ")
		b.WriteString(c.Label)
		b.WriteString("\n\n")
		b.WriteString(strings.TrimRight(c.Text, "\n"))
	}
	if len(skills) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("# Skills\n\n")
		b.WriteString("Skills are instructions for particular tasks. When a task matches a skill's description, " +
			"read its SKILL.md with the read tool at the path shown before you act, and follow it. " +
			"Files a skill refers to are read relative to its folder through the same skill:// path (read, ls, find and grep accept it). " +
			"Skill folders are read-only, and the host never runs a skill's scripts.\n")
		for _, k := range skills {
			b.WriteString("\n- ")
			b.WriteString(k.Name)
			b.WriteString(": ")
			b.WriteString(k.Description)
			b.WriteString(" (")
			b.WriteString(k.Path())
			b.WriteString(")")
		}
	}
	return b.String()
}
