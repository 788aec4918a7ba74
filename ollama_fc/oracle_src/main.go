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
//
// Timing (-time): batch requests with "runs", "budget_ms", "parses" and "drop" besides. The
// template is parsed "parses" times, then executed up to "runs" times (at least 3, more until
// "budget_ms" is spent; with "runs" 0 not at all, not even the untimed warm-up render), and with
// "drop" > 0 the server's truncation loop (chatPrompt in server/prompt.go: one render per
// message dropped, then the final one) is timed the same way. One JSON line per request with
// Go's own wall-clock timings in nanoseconds: {"parse_ns": [...], "execute_ns": [...],
// "truncate_ns": [...], "prompt_bytes": n, "truncated_bytes": n} or an error line as in batch.
// -cpuprofile FILE writes a CPU profile of the timed work.
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
	"runtime/pprof"
	"slices"
	"time"

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

// prepare decodes a request and returns its parsed template and the values the server passes.
func prepare(line []byte, req *request) (*template.Template, template.Values, error) {
	if err := json.Unmarshal(line, req); err != nil {
		return nil, template.Values{}, &renderError{"request", err}
	}
	tmpl := parsed.tmpl
	if req.SameTemplate && tmpl == nil {
		return nil, template.Values{}, &renderError{"request", fmt.Errorf("same_template given before any template")}
	}
	if !req.SameTemplate && (tmpl == nil || parsed.source != req.Template) {
		var err error
		if tmpl, err = template.Parse(req.Template); err != nil {
			return nil, template.Values{}, &renderError{"parse", err}
		}
		parsed.source, parsed.tmpl = req.Template, tmpl
	}
	return tmpl, values(tmpl, req), nil
}

// values follows the server's chat path for a request without images or a Modelfile SYSTEM:
// a model whose template infers thinking tags gets think=true when the request leaves it unset.
func values(tmpl *template.Template, req *request) template.Values {
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
	return values
}

// render answers one request of the single and batch modes.
func render(line []byte) (string, error) {
	var req request
	tmpl, values, err := prepare(line, &req)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	if err := tmpl.Execute(&out, values); err != nil {
		return "", &renderError{"execute", err}
	}
	return out.String(), nil
}

type timingRequest struct {
	Runs     int `json:"runs"`
	BudgetMS int `json:"budget_ms"`
	Parses   int `json:"parses"`
	Drop     int `json:"drop"`
}

type timingResult struct {
	ParseNS        []int64 `json:"parse_ns"`
	ExecuteNS      []int64 `json:"execute_ns"`
	TruncateNS     []int64 `json:"truncate_ns"`
	PromptBytes    int     `json:"prompt_bytes"`
	TruncatedBytes int     `json:"truncated_bytes"`
}

// repeat times work up to runs times: at least three (or runs, if fewer), then until budget is spent.
func repeat(runs int, budget time.Duration, work func() error) ([]int64, error) {
	var times []int64
	var spent time.Duration
	for i := 0; i < runs; i++ {
		start := time.Now()
		if err := work(); err != nil {
			return nil, err
		}
		took := time.Since(start)
		times = append(times, took.Nanoseconds())
		if spent += took; i+1 >= min(3, runs) && spent >= budget {
			break
		}
	}
	return times, nil
}

// execute renders messages as the server's renderPrompt does; Execute merges same-role
// messages in place, so it is handed a copy, as chatPrompt hands it one.
func execute(tmpl *template.Template, values template.Values, messages []api.Message, out *bytes.Buffer) error {
	out.Reset()
	values.Messages = slices.Clone(messages)
	return tmpl.Execute(out, values)
}

// truncate is chatPrompt's loop when the first drop messages do not fit: one render per start
// index up to drop (each keeping the system messages before it), then the final render.
func truncate(tmpl *template.Template, values template.Values, messages []api.Message, drop int, out *bytes.Buffer) error {
	var system []api.Message
	for i := 0; i <= drop && i < len(messages); i++ {
		system = make([]api.Message, 0)
		for j := range i {
			if messages[j].Role == "system" {
				system = append(system, messages[j])
			}
		}
		if err := execute(tmpl, values, append(system, messages[i:]...), out); err != nil {
			return err
		}
	}
	return execute(tmpl, values, append(system, messages[min(drop, len(messages)-1):]...), out)
}

// timeRender answers one request of the timing mode.
func timeRender(line []byte) (*timingResult, error) {
	var req request
	tmpl, values, err := prepare(line, &req)
	if err != nil {
		return nil, err
	}
	var spec timingRequest
	if err := json.Unmarshal(line, &spec); err != nil {
		return nil, &renderError{"request", err}
	}
	budget := time.Duration(spec.BudgetMS) * time.Millisecond
	result := &timingResult{}
	if result.ParseNS, err = repeat(spec.Parses, 0, func() error {
		_, err := template.Parse(parsed.source)
		return err
	}); err != nil {
		return nil, &renderError{"parse", err}
	}
	if spec.Runs == 0 {
		return result, nil
	}
	var out bytes.Buffer
	if err := execute(tmpl, values, req.Messages, &out); err != nil { // untimed warm-up
		return nil, &renderError{"execute", err}
	}
	result.PromptBytes = out.Len()
	if result.ExecuteNS, err = repeat(spec.Runs, budget, func() error {
		return execute(tmpl, values, req.Messages, &out)
	}); err != nil {
		return nil, &renderError{"execute", err}
	}
	if spec.Drop > 0 {
		if result.TruncateNS, err = repeat(spec.Runs, budget, func() error {
			return truncate(tmpl, values, req.Messages, spec.Drop, &out)
		}); err != nil {
			return nil, &renderError{"execute", err}
		}
		result.TruncatedBytes = out.Len()
	}
	return result, nil
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
	timing := flag.Bool("time", false, "like -batch, but parse and execute each template repeatedly and report Go's timings")
	cpuprofile := flag.String("cpuprofile", "", "with -time: write a CPU profile of the timed work to this file")
	flag.Parse()

	if *version {
		fmt.Println(ollamaVersion())
		return
	}
	if !*batch && !*timing {
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

	if *timing && *cpuprofile != "" {
		file, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		pprof.StartCPUProfile(file)
		defer pprof.StopCPUProfile()
	}
	scanner := bufio.NewScanner(os.Stdin)
	scanner.Buffer(make([]byte, 1<<20), 1<<30)
	out := bufio.NewWriter(os.Stdout)
	encoder := json.NewEncoder(out)
	encoder.SetEscapeHTML(false)
	for scanner.Scan() {
		var answer any
		var err error
		if *timing {
			answer, err = timeRender(scanner.Bytes())
		} else {
			var prompt string
			prompt, err = render(scanner.Bytes())
			answer = map[string]string{"prompt": prompt}
		}
		if err != nil {
			stage := "request"
			if re, ok := err.(*renderError); ok {
				stage = re.stage
			}
			answer = map[string]string{"error": err.Error(), "stage": stage}
		}
		encoder.Encode(answer)
		out.Flush()
	}
	if err := scanner.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
}
