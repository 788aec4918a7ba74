// Convert Jinja chat templates with @huggingface/ollama-utils, the fidelity benchmark's anchor.
// Input on stdin: one JSON object per line {"name", "chat_template", "bos_token"?, "eos_token"?}.
// Output on stdout: one JSON object per line {"name", "how", "template", "stop"} or {"name", "error"};
// "how" is the converter's own label of the path it took (a library model name for a table match,
// "custom-matching" or "auto-conversion"); "template" is null when it gives up.
import { createInterface } from "node:readline";
import { convertGGUFTemplateToOllama } from "@huggingface/ollama-utils";

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
	if (!line.trim()) continue;
	const request = JSON.parse(line);
	let answer;
	try {
		const entry = convertGGUFTemplateToOllama({
			chat_template: request.chat_template,
			bos_token: request.bos_token,
			eos_token: request.eos_token,
		});
		answer = entry
			? { name: request.name, how: entry.model, template: entry.ollama.template, stop: entry.ollama.params?.stop ?? [] }
			: { name: request.name, how: null, template: null, stop: [] };
	} catch (error) {
		answer = { name: request.name, error: String(error?.message ?? error) };
	}
	process.stdout.write(JSON.stringify(answer) + "\n");
}
