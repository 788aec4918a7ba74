// Command oracle renders an Ollama TEMPLATE exactly as the Ollama server of the module version
// it is built against does: the same request decoding (api.ChatRequest), the same template
// package (Parse, then Execute with the values the chat handler passes), the same thinking
// default. It exists so that tests and `ollama-fc verify` check renders against Ollama's own
// engine rather than a re-implementation of it.
//
// One request:  JSON {"template", "messages", "tools", "think"} on stdin; the prompt on stdout,
// byte for byte; exit status 1 with Ollama's own error on stderr when the template is refused.
//
// Batch (-batch): one such JSON request per input line; one JSON line per request on stdout,
// {"prompt": "..."} or {"error": "...", "stage": "parse"|"execute"|"request"}. A request with
// "same_template": true and no template reuses the previous request's parsed template.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/template"
	"github.com/ollama/ollama/thinking"
)

type request struct {
	Template string `json:"template"`
	// SameTemplate (batch only) renders with the template of the previous request, so a large
	// template is sent once per batch of cases rather than once per case.
	SameTemplate bool `json:"same_template"`
	api.ChatRequest
}

type renderError struct {
	stage string
	err   error
}

func (e *renderError) Error() string { return e.err.Error() }

// parsed keeps the last template parsed: the server parses a model's template once and
// executes it for every request, and a batch usually renders one template many times.
var parsed struct {
	source string
	tmpl   *template.Template
}

// render follows the server's chat path for a request without images or a Modelfile SYSTEM:
// a model whose template infers thinking tags gets think=true when the request leaves it unset.
func render(line []byte) (string, error) {
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		return "", &renderError{"request", err}
	}
	tmpl := parsed.tmpl
	if req.SameTemplate && tmpl == nil {
		return "", &renderError{"request", fmt.Errorf("same_template given before any template")}
	}
	if !req.SameTemplate && (tmpl == nil || parsed.source != req.Template) {
		var err error
		if tmpl, err = template.Parse(req.Template); err != nil {
			return "", &renderError{"parse", err}
		}
		parsed.source, parsed.tmpl = req.Template, tmpl
	}
	think := req.Think
	if open, close := thinking.InferTags(tmpl.Template); think == nil && open != "" && close != "" {
		think = &api.ThinkValue{Value: true}
	}
	values := template.Values{Messages: req.Messages, Tools: req.Tools}
	if think != nil {
		values.Think = think.Bool()
		values.ThinkLevel = think.String()
		values.IsThinkSet = true
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, values); err != nil {
		return "", &renderError{"execute", err}
	}
	return out.String(), nil
}

func ollamaVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "github.com/ollama/ollama" {
				return dep.Version
			}
		}
	}
	return "unknown"
}

func main() {
	batch := flag.Bool("batch", false, "read one JSON request per line, write one JSON result per line")
	version := flag.Bool("version", false, "print the Ollama module version this oracle was built against")
	flag.Parse()

	if *version {
		fmt.Println(ollamaVersion())
		return
	}
	if !*batch {
		input, err := io.ReadAll(os.Stdin)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		prompt, err := render(input)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Stdout.WriteString(prompt)
		return
	}

	scanner := bufio.NewScanner(os.Stdin)
	scanner.Buffer(make([]byte, 1<<20), 1<<30)
	out := bufio.NewWriter(os.Stdout)
	encoder := json.NewEncoder(out)
	encoder.SetEscapeHTML(false)
	for scanner.Scan() {
		prompt, err := render(scanner.Bytes())
		if err != nil {
			stage := "request"
			if re, ok := err.(*renderError); ok {
				stage = re.stage
			}
			encoder.Encode(map[string]string{"error": err.Error(), "stage": stage})
		} else {
			encoder.Encode(map[string]string{"prompt": prompt})
		}
		out.Flush()
	}
	if err := scanner.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
