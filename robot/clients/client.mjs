// An unmodified program using the official TypeScript SDKs, pointed at lowtide serve by its base URL only.
// Usage: node client.mjs anthropic|openai|gemini|concurrent|retry; prints one JSON object summing up what it saw.
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import OpenAI from "openai";

const env = process.env;
const claude = new Anthropic({ baseURL: env.LOWTIDE_SERVE_ANTHROPIC_URL, apiKey: env.LOWTIDE_SERVE_KEY, maxRetries: 0 });
const gpt = new OpenAI({ baseURL: `${env.LOWTIDE_SERVE_OPENAI_URL}/v1`, apiKey: env.LOWTIDE_SERVE_KEY, maxRetries: 0 });
const tideParameters = {
  type: "object",
  properties: { port: { type: "string" } },
  required: ["port"],
  additionalProperties: false,
};
const askForTool = "When is the next tide at Brest? [[emulator:tool:get_tide]]";

async function anthropicRun() {
  const message = await claude.messages.create({
    model: env.ANTHROPIC_MODEL,
    max_tokens: 64,
    messages: [{ role: "user", content: "What is a tide?" }],
  });
  const stream = claude.messages.stream({
    model: env.ANTHROPIC_MODEL,
    max_tokens: 64,
    messages: [{ role: "user", content: "Tell me about tides" }],
  });
  let streamed = "";
  stream.on("text", (text) => (streamed += text));
  const final = await stream.finalMessage();
  const called = await claude.messages.create({
    model: env.ANTHROPIC_MODEL,
    max_tokens: 128,
    tools: [{ name: "get_tide", description: "The next tide.", input_schema: tideParameters }],
    messages: [{ role: "user", content: askForTool }],
  });
  const toolUse = called.content.find((block) => block.type === "tool_use");
  return {
    text: message.content[0].text.length > 0,
    stream_rebuilds_final: streamed.length > 0 && streamed === final.content[0].text,
    tool: toolUse?.name ?? null,
    stop_reason: called.stop_reason,
  };
}

async function openaiRun() {
  const completion = await gpt.chat.completions.create({
    model: env.OPENAI_MODEL,
    messages: [{ role: "user", content: "What is a tide?" }],
  });
  const chunks = await gpt.chat.completions.create({
    model: env.OPENAI_MODEL,
    messages: [{ role: "user", content: "Tell me about tides" }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let streamed = "";
  let usage = null;
  for await (const chunk of chunks) {
    streamed += chunk.choices[0]?.delta?.content ?? "";
    usage = chunk.usage ?? usage;
  }
  const response = await gpt.responses.create({ model: env.OPENAI_MODEL, input: "What is a tide?" });
  const events = await gpt.responses.create({ model: env.OPENAI_MODEL, input: "Tell me about tides", stream: true });
  let deltas = "";
  let completed = null;
  for await (const event of events) {
    if (event.type === "response.output_text.delta") deltas += event.delta;
    if (event.type === "response.completed") completed = event.response;
  }
  const tools = [{ type: "function", function: { name: "get_tide", parameters: tideParameters } }];
  const messages = [{ role: "user", content: askForTool }];
  const first = await gpt.chat.completions.create({ model: env.OPENAI_MODEL, messages, tools });
  const call = first.choices[0].message.tool_calls[0];
  messages.push(first.choices[0].message, { role: "tool", tool_call_id: call.id, content: "High tide at 14:02" });
  const second = await gpt.chat.completions.create({ model: env.OPENAI_MODEL, messages, tools });
  return {
    text: completion.choices[0].message.content.length > 0,
    stream_text: streamed.length > 0,
    stream_usage: usage !== null && usage.completion_tokens > 0,
    response_text: response.output_text.length > 0,
    response_stream_rebuilds_final: completed !== null && deltas === completed.output[0].content[0].text,
    tool: call.function.name,
    after_tool: second.choices[0].finish_reason,
  };
}

async function geminiRun() {
  const httpOptions = { baseUrl: env.LOWTIDE_SERVE_GEMINI_URL };
  const ai = new GoogleGenAI({ apiKey: env.LOWTIDE_SERVE_KEY, httpOptions });
  const answer = await ai.models.generateContent({
    model: env.GEMINI_MODEL,
    contents: "What is a tide?",
    config: { systemInstruction: "Be brief.", temperature: 0.3, maxOutputTokens: 64 },
  });
  const stream = await ai.models.generateContentStream({ model: env.GEMINI_MODEL, contents: "Tell me about tides" });
  let streamed = "";
  let chunks = 0;
  for await (const chunk of stream) {
    streamed += chunk.text ?? "";
    chunks += 1;
  }
  let wrongKeyStatus = null;
  try {
    const stranger = new GoogleGenAI({ apiKey: "not-the-key", httpOptions });
    await stranger.models.generateContent({ model: env.GEMINI_MODEL, contents: "Hello" });
  } catch (error) {
    wrongKeyStatus = error.status ?? null;
  }
  return {
    text: answer.text,
    finish_reason: answer.candidates[0].finishReason,
    total_tokens: answer.usageMetadata.totalTokenCount,
    stream_text: streamed,
    stream_chunks: chunks,
    wrong_key_status: wrongKeyStatus,
  };
}

async function concurrentRun() {
  const asked = Array.from({ length: 20 }, (_, index) =>
    gpt.chat.completions.create({
      model: env.OPENAI_MODEL,
      messages: [{ role: "user", content: `Concurrent question ${index} from node at ${Date.now()}` }],
    }),
  );
  const answers = await Promise.all(asked);
  return { distinct: new Set(answers.map((answer) => answer.id)).size };
}

async function retryRun() {
  const ask = () =>
    claude.messages.create({
      model: env.ANTHROPIC_MODEL,
      max_tokens: 64,
      messages: [{ role: "user", content: "Asked twice from node" }],
    });
  const first = await ask();
  const again = await ask();
  return { same: first.id === again.id && first.content[0].text === again.content[0].text };
}

const runs = {
  anthropic: anthropicRun,
  openai: openaiRun,
  gemini: geminiRun,
  concurrent: concurrentRun,
  retry: retryRun,
};
const run = runs[process.argv[2]];
if (run === undefined) {
  console.error(`usage: node client.mjs ${Object.keys(runs).join("|")}`);
  process.exit(2);
}
console.log(JSON.stringify(await run()));
