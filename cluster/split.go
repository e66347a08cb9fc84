package cluster

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// This file splits the input into documents, each converted to JSON, keeping where each starts for errors.

// document is one YAML document or JSON value of the input, as JSON.
type document struct {
	index int // 1-based, counting non-empty documents
	line  int // line of the input on which the document starts
	json  []byte
}

func (d document) String() string {
	return fmt.Sprintf("document %d (line %d)", d.index, d.line)
}

func looksLikeJSON(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n")
	return len(t) > 0 && (t[0] == '{' || t[0] == '[')
}

// splitJSON reads a stream of JSON values. A top-level array is read as a list of objects.
func splitJSON(data []byte) ([]document, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var docs []document
	for n := 1; ; n++ {
		start := dec.InputOffset()
		var raw json.RawMessage
		if err := dec.Decode(&raw); err == io.EOF {
			return docs, nil
		} else if err != nil {
			off := dec.InputOffset()
			var se *json.SyntaxError
			if errors.As(err, &se) {
				off = se.Offset
			}
			return nil, fmt.Errorf("document %d (line %d): invalid JSON: %w", n, lineAt(data, off), err)
		}
		// InputOffset is where the previous value ended; skip whitespace to point at this one.
		for start < int64(len(data)) && strings.IndexByte(" \t\r\n", data[start]) >= 0 {
			start++
		}
		docs = append(docs, document{index: n, line: lineAt(data, start), json: raw})
	}
}

// lineAt returns the 1-based line of byte offset off in data.
func lineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// splitYAML splits a YAML stream into documents at "---" lines (and "..." end markers) and converts each to
// JSON, remembering where each starts so that errors can give input line numbers.
func splitYAML(data []byte) ([]document, error) {
	var docs []document
	var cur bytes.Buffer
	start, n := 1, 0
	flush := func() error {
		defer cur.Reset()
		if !hasContent(cur.Bytes()) {
			// Blank or only comments, such as a header before the first "---": not a document to count.
			return nil
		}
		n++
		j, err := yaml.YAMLToJSON(cur.Bytes())
		if err != nil {
			return fmt.Errorf("document %d (line %d): invalid YAML: %s", n, start, yamlError(err, start))
		}
		if bytes.Equal(j, []byte("null")) {
			return nil // an explicit null (or "~"): nothing to read
		}
		docs = append(docs, document{index: n, line: start, json: j})
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), len(data)+1)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Bytes()
		if sep, rest := documentSeparator(text); sep {
			if err := flush(); err != nil {
				return nil, err
			}
			start = line
			if len(bytes.TrimSpace(rest)) > 0 && rest[0] != '#' {
				// "--- {kind: Pod}": the document begins on the separator line. Blank the marker to keep columns.
				cur.WriteString("   ")
				cur.Write(rest)
				cur.WriteByte('\n')
			} else {
				start = line + 1
			}
			continue
		}
		if cur.Len() == 0 && len(bytes.TrimSpace(text)) == 0 {
			start = line + 1 // leading blank lines are not part of the document
			continue
		}
		cur.Write(text)
		cur.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read snapshot: line %d: %w", line+1, err)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return docs, nil
}

// hasContent reports whether a YAML document has a line that is neither blank nor a comment.
func hasContent(doc []byte) bool {
	for len(doc) > 0 {
		line := doc
		if i := bytes.IndexByte(doc, '\n'); i >= 0 {
			line, doc = doc[:i], doc[i+1:]
		} else {
			doc = nil
		}
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			return true
		}
	}
	return false
}

// documentSeparator reports whether a line separates YAML documents ("---", "--- ...", "...") and returns what
// follows the marker.
func documentSeparator(line []byte) (bool, []byte) {
	line = bytes.TrimRight(line, " \t\r")
	if bytes.Equal(line, []byte("...")) {
		return true, nil
	}
	if !bytes.HasPrefix(line, []byte("---")) {
		return false, nil
	}
	rest := line[3:]
	if len(rest) == 0 {
		return true, nil
	}
	if rest[0] == ' ' || rest[0] == '\t' {
		return true, rest[1:]
	}
	return false, nil
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// yamlError rewrites the line numbers in a YAML parser error, which count from the document's start, into lines
// of the whole input.
func yamlError(err error, start int) string {
	msg := strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
	return yamlLine.ReplaceAllStringFunc(msg, func(m string) string {
		n, convErr := strconv.Atoi(m[len("line "):])
		if convErr != nil {
			return m
		}
		return "line " + strconv.Itoa(n+start-1)
	})
}
