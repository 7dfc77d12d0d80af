// Drives `strata-cli serve` with the official `openai` npm client: models list, chat
// (non-streaming and streaming, n replies streamed), log probabilities, completions, a tool-call
// round trip and an error. Exits non-zero with a message on the first failed check; prints one
// JSON line on success.
//   node openai_client.mjs BASE_URL MODEL_ID API_KEY
import OpenAI from 'openai';

const [baseURL, model, apiKey] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 60000 });

function check(condition, message) {
  if (!condition) {
    console.error(`openai_client: FAILED: ${message}`);
    process.exit(1);
  }
}

const question = [{ role: 'user', content: 'What is the capital of France?' }];

const models = await client.models.list();
check(models.data.length === 1 && models.data[0].id === model,
      `models.list: expected [${model}], got ${JSON.stringify(models.data)}`);

const chat = await client.chat.completions.create({ model, messages: question, temperature: 0, max_tokens: 64 });
const answer = chat.choices[0].message.content;
check(answer.includes('Paris'), `chat: expected an answer naming Paris, got ${JSON.stringify(answer)}`);
check(chat.choices[0].finish_reason === 'stop', `chat: finish_reason ${chat.choices[0].finish_reason}`);
check(chat.usage.prompt_tokens > 0 && chat.usage.completion_tokens > 0 &&
      chat.usage.total_tokens === chat.usage.prompt_tokens + chat.usage.completion_tokens,
      `chat: usage ${JSON.stringify(chat.usage)}`);

const stream = await client.chat.completions.create({
  model, messages: question, temperature: 0, max_tokens: 64, stream: true,
  stream_options: { include_usage: true },
});
let streamed = '';
let streamedUsage = null;
let finish = null;
for await (const chunk of stream) {
  if (chunk.usage) streamedUsage = chunk.usage;
  const choice = chunk.choices[0];
  if (!choice) continue;
  if (choice.delta?.content) streamed += choice.delta.content;
  if (choice.finish_reason) finish = choice.finish_reason;
}
check(streamed === answer, `stream: ${JSON.stringify(streamed)} differs from ${JSON.stringify(answer)}`);
check(finish === 'stop', `stream: finish_reason ${finish}`);
check(streamedUsage && streamedUsage.total_tokens === chat.usage.total_tokens,
      `stream: usage ${JSON.stringify(streamedUsage)} vs ${JSON.stringify(chat.usage)}`);

// Log probabilities, and a developer message (newer OpenAI clients' system instructions).
const scored = await client.chat.completions.create({
  model, temperature: 0, max_tokens: 64, logprobs: true, top_logprobs: 2,
  messages: [{ role: 'developer', content: 'Answer briefly.' }, ...question],
});
const entries = scored.choices[0].logprobs?.content ?? [];
check(entries.length > 0 && entries.length === scored.usage.completion_tokens - 1,
      `logprobs: ${entries.length} entries for ${scored.usage.completion_tokens} tokens`);
check(entries.every((e) => e.logprob <= 0 && e.top_logprobs.length === 2 && e.top_logprobs[0].token === e.token),
      `logprobs: ${JSON.stringify(entries[0])}`);
check(entries.map((e) => e.token).join('').endsWith(scored.choices[0].message.content),
      `logprobs: tokens ${JSON.stringify(entries.map((e) => e.token))} do not spell the answer`);

const completion = await client.completions.create({ model, prompt: 'The capital of France is', max_tokens: 8, temperature: 0 });
check(completion.choices[0].text.length > 0, 'completions: empty text');
check(completion.usage.completion_tokens >= 1 && completion.usage.completion_tokens <= 8,
      `completions: usage ${JSON.stringify(completion.usage)}`);

const scoredCompletion = await client.completions.create({
  model, prompt: 'The capital of France is', max_tokens: 8, temperature: 0, logprobs: 2 });
const older = scoredCompletion.choices[0].logprobs;
check(older && older.tokens.join('') === scoredCompletion.choices[0].text &&
      older.token_logprobs.length === older.tokens.length && older.text_offset[0] === 0 &&
      older.top_logprobs.every((m, i) => m[older.tokens[i]] === older.token_logprobs[i]),
      `completions logprobs: ${JSON.stringify(older)}`);

// n replies streamed: the client sees each choice's chunks by index; they join into what the
// same request answers without stream.
const several = { model, messages: question, temperature: 1.2, seed: 3, max_tokens: 16, n: 2 };
const severalWhole = await client.chat.completions.create(several);
const severalParts = ['', ''];
for await (const chunk of await client.chat.completions.create({ ...several, stream: true })) {
  for (const choice of chunk.choices) severalParts[choice.index] += choice.delta?.content ?? '';
}
check(severalWhole.choices.length === 2 &&
      severalWhole.choices.every((c, i) => (c.message.content ?? '') === severalParts[i]),
      `n streamed: ${JSON.stringify(severalParts)} vs ${JSON.stringify(severalWhole.choices)}`);

// Scoring as evaluation harnesses do: echo with logprobs 1 and max_tokens 1 lists the prompt's
// tokens (the first without a log probability) and then the generated one.
const echoed = await client.completions.create({
  model, prompt: 'The capital of France is Paris', max_tokens: 1, temperature: 0, logprobs: 1, echo: true });
const echo = echoed.choices[0].logprobs;
check(echoed.choices[0].text.startsWith('The capital of France is Paris') &&
      echo.tokens.length === echoed.usage.prompt_tokens + 1 && echo.token_logprobs[0] === null &&
      echo.token_logprobs.slice(1).every((l) => l <= 0) &&
      echo.tokens.slice(0, echoed.usage.prompt_tokens).join('') === 'The capital of France is Paris',
      `echo: ${JSON.stringify(echoed.choices[0])}`);

// Tool round trip: the assistant's call and the tool's answer go back into the conversation;
// the tool definitions must reach the prompt (more prompt tokens than without them).
const tools = [{
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The current weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
}];
const conversation = [
  { role: 'user', content: 'What is the weather in Paris?' },
  { role: 'assistant', content: null,
    tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } }] },
  { role: 'tool', tool_call_id: 'call_1', content: 'sunny, 21 C' },
];
const withTools = await client.chat.completions.create({ model, messages: conversation, tools, temperature: 0, max_tokens: 32 });
const withoutTools = await client.chat.completions.create({ model, messages: conversation, temperature: 0, max_tokens: 32 });
check(withTools.choices[0].message.role === 'assistant', 'tools: no assistant message');
check(['stop', 'length', 'tool_calls'].includes(withTools.choices[0].finish_reason),
      `tools: finish_reason ${withTools.choices[0].finish_reason}`);
check(withTools.usage.prompt_tokens > withoutTools.usage.prompt_tokens + 20,
      `tools: prompt with tools ${withTools.usage.prompt_tokens} tokens, without ${withoutTools.usage.prompt_tokens}`);

let notFound = null;
try {
  await client.chat.completions.create({ model: 'no-such-model', messages: question });
} catch (e) {
  notFound = e;
}
check(notFound instanceof OpenAI.NotFoundError, `unknown model: expected NotFoundError, got ${notFound}`);

console.log(JSON.stringify({ ok: true, answer, usage: chat.usage, tool_prompt_tokens: withTools.usage.prompt_tokens }));
