package script

// Summary parses a strategy's text without running it and returns the
// first line of its module docstring ("" when it has none). A file that
// does not parse returns the first syntax error.
func Summary(name, text string) (string, error) {
	f, err := fileOptions.Parse(name, text, 0)
	if err != nil {
		return "", compileErrors(name, err)[0]
	}
	return firstLine(docstring(f)), nil
}
