// strata-cli: the command-line client of the engine. Errors go to stderr with a non-zero exit
// status: 1 for a failure, 2 for a usage error.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "commands.h"
#include "strata/openmp_wait_policy.h"

namespace {

using strata::cli::Command;

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"eval", {"dense-attention"}, strata::cli::runEval,
       R"(eval      --model DIR --tokens IDS [--precision native|f32] [--logits-out FILE]
            [--mtp-logits-out FILE] [--attention auto|expanded|absorbed] [--dense-attention]
            [--threads N]
            Teacher-forced forward pass. Prints "top1: <id> ..." (argmax per position) and, with
            --mtp-logits-out, "mtp_top1: ...". Logit files are little-endian float32
            [tokens x vocab]; MTP logits [tokens-1 x vocab], row p predicting token p+2.)"},
      {"generate", {"greedy"}, strata::cli::runGenerate,
       R"(generate  --model DIR --tokens IDS --max-new N --greedy [--precision native|f32]
            [--threads N]
            Greedy continuation. Prints the new ids as "ids: <id> ...".)"},
      {"run", {"no-think"}, strata::cli::runRun,
       R"(run       --model DIR --prompt TEXT [--system TEXT] [--no-think] [--max-new N]
            [--temperature T] [--top-p P] [--top-k K] [--min-p P] [--repeat-penalty R]
            [--logit-bias ID=BIAS,...] [--seed S] [--threads N] [--precision native|f32]
            [--ram-gb X]
            [--io direct|buffered|uring] [--kv-precision f32|bf16|f16]
            [--grammar FILE.gbnf | --json-schema FILE.json]
            [--speculate auto|off|mtp,ngram,grammar] [--mtp-depth N] [--mtp-min-prob P]
            [--mtp-vocab F]
            One answer to a prompt, rendered with the GLM chat format. The answer goes to
            stdout; the thinking and a speed line go to stderr. --ram-gb: the memory budget; the
            experts of a Strata container then stream from disk, a Hugging Face folder is held
            whole (the engine refuses a budget that cannot hold the model's minimum, with the
            numbers). --grammar (GBNF) or
            --json-schema: the answer after the thinking follows the grammar (docs/grammar.md).
            --speculate: speculative decoding, lossless (docs/speculative-decoding.md); auto
            (default) keeps each drafter only while it measurably wins, a list forces those
            drafters on; the speed line shows tokens per pass and each drafter's acceptance.
            --mtp-depth: most MTP draft tokens per pass (default 3); --mtp-min-prob: a chain
            stops before a draft token the MTP head gives less than P (default 0.8; 0: never);
            --mtp-vocab: MTP drafts come from this share of the vocabulary, its first ids,
            plus special tokens and the conversation's (default 0.25; 1: all).)"},
      {"chat", {"no-think"}, strata::cli::runChat,
       R"(chat      --model DIR [same options as run, without --prompt] [--session FILE]
            Multi-turn chat in the terminal; each turn reuses the KV cache of the ones before.
            --session FILE: continue the conversation saved in FILE (created if absent) and
            save it after every turn, its KV cache in FILE.kv, so reopening is instant.)"},
      {"eval-tasks", {"json", "verbose"}, strata::cli::runEvalTasks,
       R"(eval-tasks --model DIR [--tasks FILE.jsonl] [--precision native|f32] [--json]
            [--max-new N] [--limit N] [--verbose] [--threads N] [--kv-precision f32|bf16|f16]
            Exact-match accuracy on a held-out task set (default DIR/eval.jsonl; rows
            {"task", "messages", "answer"}), greedy, per task and overall. --json: the last
            line is {"overall": fraction, "tasks": {task: fraction}, ...}.)"},
      {"bench kernels", {"json", "quick"}, strata::cli::runBenchKernels,
       R"(bench kernels [--json] [--quick] [--repeats N] [--threads N]
            Memory read bandwidth, then each kernel's weight bandwidth (int4, int8, f32) on
            GLM-5 decode shapes and GFLOP/s on prefill shapes, as a ratio to that bandwidth,
            absorbed attention's row kernels and the f32 kernel on a small model's shapes
            (GFLOP/s, one thread, from cache), and a GLM-5 layer's int8 kv_b as the absorbed
            attention reads it (one thread, from memory).
            --json: one JSON object per line, the last a summary.)"},
      {"bench cache", {"json"}, strata::cli::runBenchCache,
       R"(bench cache --trace FILE [--capacity-fraction F | --capacity N] [--json]
            Replays a routing trace (JSON lines, see engine/src/tier/routing_trace.h)
            through each expert-cache replacement policy, Belady's optimal offline policy
            and the best fixed set of experts (no online policy beats it when routing is
            independent from token to token); capacity in experts, default 20% of
            layers x experts. Hit rates count every access from a cold cache. --json: one
            object per policy with "policy", "hit_rate", "belady_hit_rate",
            "static_hit_rate", "ratio", "capacity", "accesses", "default".)"},
      {"bench decode", {"json", "no-prefetch", "page-cache"}, strata::cli::runBenchDecode,
       R"(bench decode --model DIR (--ram-gb X | --expert-fraction F) [--io direct|buffered|uring]
            [--io-depth N] [--tokens N] [--prompt-tokens N] [--warmup N] [--policy NAME]
            [--pinned-fraction F] [--seed N] [--data-dir DIR]
            [--no-prefetch] [--page-cache] [--context TOKENS] [--threads N] [--record-trace FILE]
            [--json]
            Decode speed of a container whose experts stream from disk under a memory budget
            (--ram-gb, or what the model needs besides experts plus a fraction F of the expert
            bytes). Measures disk and memory bandwidth in the same run; the limit per token is
            max(bytes read / disk bandwidth, weight bytes touched / memory bandwidth), the disk
            bandwidth being the larger of the probe's and the rate reached while decoding, the
            memory bandwidth probed between every 8 tokens: limit and ratio are medians over
            those segments, each against the probes either side of it.
            --warmup N: untimed decode steps first (to fill the cache). --seed N: the
            prompt's random tokens. --data-dir DIR: keep the expert usage history there (read
            at start for the pinned set and the cache's counts, written at the end), as
            run/chat do in the user's data folder; without it every run starts cold. --json: the
            last line is one JSON object (tok_s, limit_tok_s, ratio, hit_rate,
            bytes_read_per_token, peak_rss_bytes, budget_bytes, ...). --record-trace writes the
            routing trace that `bench cache` replays.)"},
      {"bench spec", {"json"}, strata::cli::runBenchSpec,
       R"(bench spec --model DIR [--prompts FILE.jsonl] [--modes ram,stream] [--count N]
            [--tokens N] [--repeats N] [--depth N] [--mtp-min-prob P] [--mtp-vocab F]
            [--expert-fraction F] [--work DIR] [--threads N] [--precision native|f32]
            [--kv-precision f32|bf16|f16] [--json]
            Speculative decoding against plain decoding in the same run, greedy, on the
            model's eval prompts (DIR/eval.jsonl or --prompts): per drafter (mtp, ngram,
            grammar on the JSON prompts under a schema of their expected keys, and auto =
            all self-tuning after 3 warm-up passes) and mode (ram; stream = a container whose
            expert cache holds a fraction F, default 0.25, of the experts): first-draft
            acceptance, tokens per forward pass, speed-up (median over repeats of the decode
            tokens/s ratio), and where a round's time goes, in plain steps: drafting
            (draft), the verify pass beyond a plain step (verify), and the speed-up if
            verifying were free (ceiling). --json: one object per drafter and mode (drafter,
            mode, acceptance, tokens_per_forward, speedup, tok_s, plain_tok_s, draft_cost,
            verify_cost, ceiling, ...).)"},
      {"bench serve", {"json"}, strata::cli::runBenchServe,
       R"(bench serve --model DIR [--streams 1,2,4] [--tokens N] [--prompt-tokens N]
            [--repeats N] [--threads N] [--ram-gb X] [--io direct|buffered|uring]
            [--precision native|f32] [--kv-precision f32|bf16|f16] [--json]
            What batching the server's slots buys: N sessions generating at once (random
            prompts, N x --tokens tokens, default 32 each), their steps batched by the engine
            and, for comparison, run separately; aggregate tokens/s (median over repeats,
            default 3), its ratio to one stream in the same run, sessions per step.
            --json: one object per configuration (streams, batched, tok_s, per_stream_tok_s,
            scaling, mean_batch, seconds).)"},
      {"bench resume", {"json"}, strata::cli::runBenchResume,
       R"(bench resume --model DIR [--tokens N,N,...] [--kv-precision f32|bf16|f16] [--work DIR]
            [--ram-gb X] [--threads N] [--precision native|f32] [--json]
            For conversations of each length (default 512,4096 random tokens): time to reopen
            the saved KV cache (Engine::resumeSession) against time to recompute it (prefill),
            and whether the next token's logits are identical. --json: one object per length
            (tokens, resume_ms, reprefill_ms, speedup, save_ms, file_bytes, ...).)"},
      {"bench quality", {"json"}, strata::cli::runBenchQuality,
       R"(bench quality --model HF_DIR [--tasks FILE.jsonl] [--text-file FILE] [--tokens N]
            [--policies int8,default,...] [--limit N] [--work DIR] [--json]
            For each quantization policy (converted into --work, default a temporary folder) and
            both kernel paths: teacher-forced top-1 agreement with f32, perplexity on held-out
            text (--text-file, or the task set rendered with its answers) and task accuracy.)"},
      {"chat-format", {"add-generation-prompt"}, strata::cli::runChatFormat,
       R"(chat-format --messages FILE.json [--tools FILE.json] [--add-generation-prompt]
            [--enable-thinking 0|1] [--clear-thinking 0|1]
            Renders OpenAI-shaped messages (an array, or an object with "messages") and tools
            (an array, or an object with "tools") into the GLM prompt text, printed exactly:
            no newline is added.)"},
      {"tokenize", {}, strata::cli::runTokenize,
       R"(tokenize  --tokenizer FILE (--text TEXT | --text-file FILE | --jsonl FILE)
            Encodes with a Hugging Face tokenizer.json (special tokens in the text are
            recognised; no BOS/EOS added). Prints "ids: <id> ..." for the exact bytes of
            --text or --text-file; --jsonl: each line a JSON string, one JSON array of ids
            printed per line.)"},
      {"detokenize", {}, strata::cli::runDetokenize,
       R"(detokenize --tokenizer FILE --ids IDS
            Prints the text of the ids exactly (no newline is added).)"},
      {"bench tokenizer", {"json"}, strata::cli::runBenchTokenizer,
       R"(bench tokenizer --tokenizer FILE --text-file FILE [--repeats N] [--json]
            Encode speed of a text (cold and warm word cache) and decode speed; medians.)"},
      {"convert", {"delete-input"}, strata::cli::runConvert,
       R"(convert   --in HF_DIR --out DIR [--policy NAME] [--threads N] [--delete-input]
            [--chunk-mb N]
            Converts a Hugging Face checkpoint (FP8 e4m3 with block scales, BF16, F16, F32) into
            a Strata container. NAME: default (routed experts int4 group 32, the rest int8),
            int8, int4-g32, int4-g64, int4-g128, int4-row. Resumable: rerun the same command
            after an interruption. --delete-input removes each source shard once converted.)"},
      {"synth", {"dry-run"}, strata::cli::runSynth,
       R"(synth     --out DIR (--preset medium|large | --from-config FILE) [--zipf S] [--seed N]
            [--threads N] [--policy NAME] [--dry-run [--context TOKENS]]
            Writes a synthetic GLM-5-shaped model with random weights (gibberish by design)
            as a Strata container, stored as convert --policy NAME (default: default) would
            store it: for benchmarks without a download. medium: hidden 2048, 10 layers, 128
            experts top-8 (~5.7B parameters, ~3.3 GB); large: 16 layers. FILE: any
            glm_moe_dsa config.json. Expert popularity per MoE layer follows 1/rank^S
            (default 1; 0 uniform). Same seed, same bytes. DIR must be new or empty.
            --dry-run (no --out): write nothing; for every policy (or the one given) print
            the container's size, one expert's, the resident weights the engine would hold
            in RAM, with the KV cache for TOKENS (default 8192), and whether that fits this
            machine: for a real model's config.json before downloading it.)"},
      {"serve", {"cors"}, strata::cli::runServe,
       R"(serve     --model DIR [--host 127.0.0.1] [--port 8080] [--api-key KEY] [--slots N]
            [--queue N] [--model-id NAME] [--max-body-bytes N] [--max-prompt-tokens N]
            [--timeout-s S] [--cors] [--threads N] [--ram-gb X] [--io direct|buffered|uring]
            [--speculate auto|off|mtp,ngram,grammar] [--mtp-depth N] [--mtp-min-prob P] [--mtp-vocab F]
            [--batch auto|on|off] [--prefill-chunk N] [--precision native|f32]
            [--kv-precision f32|bf16|f16]
            OpenAI-compatible HTTP server: GET /health, GET /v1/models, POST
            /v1/chat/completions and /v1/completions (streaming with SSE). Loopback by default;
            port 0 picks a free port. Prints "listening on http://HOST:PORT"; SIGINT or SIGTERM
            stops it. --slots: requests generated at once (default 1); --queue: requests
            waiting for a slot (default 8), beyond which the answer is 429. --batch: slots share
            forward steps (auto: when experts stream from disk; bench serve compares).
            --prefill-chunk: prompt tokens per prefill step, which the other slots' rows join
            (default 256; 0 or more than 512: 512, the step the memory plan holds).)"},
      {"inspect", {}, strata::cli::runInspect,
       R"(inspect   DIR [--context TOKENS]
            One screen about a model folder (Hugging Face or Strata container) and whether it
            fits this machine (resident weights + KV cache for TOKENS, default 8192, vs RAM).)"},
  };
  return table;
}

std::string usage() {
  std::string text = "usage: strata-cli <command> [options]\n\ncommands:\n";
  for (const Command& c : commands()) text.append("  ").append(c.usage).append("\n");
  text.append("  help      This text.\n\nIDS is a comma-separated list of token ids, e.g. 1,2,3.\n");
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  strata::ensurePassiveOpenMpWaiting(argv);
  std::string name = argc > 1 ? argv[1] : "help";
  int first = 2;  // where options start; two-word commands ("bench kernels") take one more
  if (argc > 2 && argv[2][0] != '-' && name == "bench") name.append(" ").append(argv[first++]);
  // `inspect DIR`: the one positional argument is read as --model DIR.
  std::vector<char*> rewritten(argv, argv + argc);
  static char modelOption[] = "--model";
  if (name == "inspect" && argc > 2 && argv[2][0] != '-') {
    rewritten.insert(rewritten.begin() + 2, modelOption);
    argv = rewritten.data();
    ++argc;
  }
  try {
    if (name == "help" || name == "--help" || name == "-h") {
      std::fputs(usage().c_str(), stdout);
      return 0;
    }
    for (const Command& c : commands())
      if (c.name == name) return c.run(strata::cli::Args(argc, argv, first, c.flags));
    throw strata::cli::UsageError("unknown command '" + name + "'");
  } catch (const strata::cli::UsageError& e) {
    std::cerr << "strata-cli: " << e.what() << "\n\n" << usage();
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "strata-cli: error: " << e.what() << "\n";
    return 1;
  }
}
