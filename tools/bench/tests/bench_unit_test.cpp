// memra-bench's own logic, without timing anything: option parsing, the statistics, the record
// and JSON round trip, the describe-line reading, and the three renderings against the checker.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "bandwidth.h"
#include "json_compare.h"
#include "memra/qtypes.h"
#include "memra_backend_rows.h"
#include "library.h"
#include "options.h"
#include "output_check.h"
#include "peer_compare.h"
#include "page_buffer.h"
#include "peer_module.h"
#include "read_loop.h"
#include "record.h"
#include "report.h"
#include "sampler.h"
#include "svg_plot.h"
#include "test_file.h"
#include "weight_store.h"

namespace memra::bench {
namespace {

ParseOutcome parse(std::vector<std::string> args) { return parse_options(args); }

TEST(BenchOptions, DefaultsAreTheIssuesLayer) {
    const ParseOutcome p = parse({});
    ASSERT_TRUE(p.ok) << p.error;
    const BenchOptions &o = p.options;
    EXPECT_EQ(o.shape.n_embd, 4096);
    EXPECT_EQ(o.shape.n_ff, 1536);
    EXPECT_EQ(o.experts, 8);
    EXPECT_EQ(o.stored, 128);
    EXPECT_EQ(o.formats.size(), size_t(MEMRA_QTYPE_COUNT));  // every format of the list
    std::vector<std::string> shipped;  // plugins/backends.table's installed rows
    for (const memra_backend_row &row : memra_backend_rows)
        if (row.shipped()) shipped.push_back(row.name);
    EXPECT_EQ(o.backends, shipped);
    EXPECT_EQ(o.threads, (std::vector<int32_t>{1, 2}));
    EXPECT_EQ(o.rows, (std::vector<int32_t>{1, 4, 8, 32, 64}));
    EXPECT_TRUE(o.has(Mode::Bandwidth) && o.has(Mode::Token) && o.has(Mode::Rows));
    EXPECT_FALSE(o.has(Mode::File));
    EXPECT_EQ(o.bandwidth_bytes, uint64_t(2) << 30);
    EXPECT_TRUE(o.hugepages);
    EXPECT_EQ(o.child_fd, -1);
}

TEST(BenchOptions, ListsAreParsedCaseInsensitivelyAndDeduplicated) {
    const ParseOutcome p = parse({"--formats", "Q4_K,q8_0,q4_k", "--backends", "AVX512,auto", "--threads", "2,1,2",
                                  "--modes", "file,token", "--shape", "2048,768", "--experts", "4", "--stored", "64"});
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_EQ(p.options.formats, (std::vector<int32_t>{12, 8}));
    EXPECT_EQ(p.options.backends, (std::vector<std::string>{"avx512", "auto"}));
    EXPECT_EQ(p.options.threads, (std::vector<int32_t>{2, 1}));
    EXPECT_TRUE(p.options.has(Mode::File) && p.options.has(Mode::Token) && !p.options.has(Mode::Rows));
    EXPECT_EQ(p.options.shape.n_embd, 2048);
    EXPECT_EQ(p.options.shape.n_ff, 768);
}

TEST(BenchOptions, QuickShrinksWhatWasNotGiven) {
    const ParseOutcome p = parse({"--quick", "--stored", "20"});
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_TRUE(p.options.quick);
    EXPECT_EQ(p.options.shape.n_embd, 512);
    EXPECT_EQ(p.options.stored, 20);
    EXPECT_EQ(p.options.bandwidth_bytes, uint64_t(64) << 20);
    EXPECT_EQ(p.options.min_reps, 3);
}

TEST(BenchOptions, HelpHasExamples) {
    const ParseOutcome p = parse({"--help"});
    ASSERT_TRUE(p.ok);
    EXPECT_TRUE(p.help);
    EXPECT_NE(p.help_text.find("Examples:"), std::string::npos);
    EXPECT_NE(p.help_text.find("--plot"), std::string::npos);
}

TEST(BenchOptions, BadArgumentsGiveOneLineReasons) {
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"--formats", "q9_Z"}, "unknown format 'q9_Z'"},
        {{"--formats", "q4_K,"}, "unknown format ''"},
        {{"--backends", "avx9"}, "unknown backend 'avx9'"},
        {{"--modes", "speed"}, "unknown mode 'speed'"},
        {{"--threads", "0"}, "thread count '0'"},
        {{"--threads", "two"}, "thread count 'two'"},
        {{"--rows", "65"}, "row count '65'"},
        {{"--shape", "4096"}, "not N_EMBD,N_FF"},
        {{"--shape", "4000,1536"}, "not a multiple of"},
        {{"--experts", "9", "--stored", "8"}, "below --experts"},
        {{"--experts", "0"}, "--experts 0"},
        {{"--max-stored-bytes", "12X"}, "byte count '12X'"},
        {{"--max-seconds", "0"}, "--max-seconds"},
        {{"--bogus"}, "bogus"},
        {{"stray"}, ""},
    };
    for (const auto &[args, needle] : cases) {
        const ParseOutcome p = parse(args);
        EXPECT_FALSE(p.ok) << args[0];
        EXPECT_NE(p.error.find(needle), std::string::npos) << p.error;
        EXPECT_EQ(p.error.find('\n'), std::string::npos) << p.error;
    }
}

TEST(BenchOptions, ByteCounts) {
    EXPECT_EQ(parse_bytes("4096"), 4096u);
    EXPECT_EQ(parse_bytes("64M"), uint64_t(64) << 20);
    EXPECT_EQ(parse_bytes("1.5g"), uint64_t(3) << 29);
    EXPECT_THROW(parse_bytes("0"), std::invalid_argument);
    EXPECT_THROW(parse_bytes("G"), std::invalid_argument);
    EXPECT_THROW(parse_bytes("-1M"), std::invalid_argument);
}

TEST(Sampler, QuantilesInterpolateBetweenSortedSamples) {
    const std::vector<double> v{10, 1, 9, 2, 8, 3, 7, 4, 6, 5};
    EXPECT_DOUBLE_EQ(quantile(v, 0.5), 5.5);
    EXPECT_DOUBLE_EQ(quantile(v, 0.0), 1);
    EXPECT_DOUBLE_EQ(quantile(v, 1.0), 10);
    EXPECT_DOUBLE_EQ(quantile(v, 0.1), 1.9);  // position 0.9 between 1 and 2
    const Summary s = summarize(v);
    EXPECT_EQ(s.reps, 10);
    EXPECT_DOUBLE_EQ(s.median, 5.5);
    EXPECT_DOUBLE_EQ(s.mad, 2.5);  // deviations 0.5,0.5,1.5,1.5,...,4.5,4.5: median 2.5
}

// A rule whose time cap never ends a test's sampling.
StopRule untimed_rule(int min_reps, int max_reps = 200) {
    StopRule rule;
    rule.min_reps = min_reps;
    rule.max_reps = max_reps;
    rule.max_seconds = 1e9;
    return rule;
}

TEST(Sampler, StopsOnceTheMedianSettles) {
    const StopRule rule = untimed_rule(4);
    const Summary s = sample_until_stable(rule, [] { return 2.0; });
    EXPECT_TRUE(s.settled);
    EXPECT_EQ(s.reps, 6);  // the first median with one `window` (5) samples before it to compare
    EXPECT_DOUBLE_EQ(s.median, 2.0);
}

TEST(Sampler, ADriftingMedianRunsToTheCap) {
    const StopRule rule = untimed_rule(2, 30);
    double next = 1;
    const Summary s = sample_until_stable(rule, [&] { return next *= 1.5; });
    EXPECT_FALSE(s.settled);
    EXPECT_EQ(s.reps, 30);
}

TEST(Sampler, ATimeCapStopsSlowSamplesAtMinSlowReps) {
    StopRule rule;
    rule.min_reps = 100;
    rule.min_slow_reps = 3;
    rule.max_seconds = 0;  // already out of time
    double next = 1;
    const Summary s = sample_until_stable(rule, [&] { return next *= 2; });
    EXPECT_EQ(s.reps, 3);
}

Record sample_record(const std::string &mode, const std::string &variant, const std::string &backend,
                     const std::string &format, int32_t threads, double seconds) {
    Record r;
    r.mode = mode;
    r.variant = variant;
    r.backend = backend;
    r.served_by = backend;
    r.format = format;
    r.threads = threads;
    r.experts = 8;
    r.bytes = 1000000000;
    r.seconds = summarize({seconds * 0.9, seconds, seconds * 1.2});
    r.note = "a \"quoted\" note, with a comma";
    return r;
}

TEST(Record, SurvivesTheJsonRoundTrip) {
    Record r = sample_record("file", "cold", "avx2", "q4_K", 2, 0.1);
    r.bandwidth_gbps = 12.5;
    r.relative_to = "pread";
    r.relative = 0.9;
    r.exposed_wait_s = 0.02;
    // Through the text, as the children send records to the parent.
    const Record back = read_record(tools::Json::parse(tools::dump_json(record_json(r))));
    EXPECT_EQ(back.mode, r.mode);
    EXPECT_EQ(back.variant, r.variant);
    EXPECT_EQ(back.note, r.note);
    EXPECT_EQ(back.bytes, r.bytes);
    EXPECT_EQ(back.threads, 2);
    EXPECT_EQ(back.seconds.reps, 3);
    EXPECT_NEAR(back.seconds.median, 0.1, 1e-9);
    EXPECT_NEAR(back.relative, 0.9, 1e-9);
    EXPECT_EQ(back.relative_to, "pread");
    EXPECT_NEAR(back.exposed_wait_s, 0.02, 1e-9);
    EXPECT_NEAR(back.bandwidth_gbps, 12.5, 1e-9);
    EXPECT_NEAR(back.gbps(), 10.0, 1e-6);
}

// A child's line that lost a key, or carries one of the wrong type, is refused naming the key.
TEST(Record, ReadingNamesAMissingOrMistypedKey) {
    tools::Json j = record_json(sample_record("token", "memory", "avx2", "q4_K", 1, 0.1));
    auto problem = [](const tools::Json &v) {
        try {
            read_record(v);
            return std::string();
        } catch (const std::runtime_error &e) {
            return std::string(e.what());
        }
    };
    EXPECT_EQ(problem(j), "");
    tools::Json mistyped = j;
    mistyped["threads"] = "2";
    EXPECT_EQ(problem(mistyped), "JSON: 'threads' is a string, expected a number");
    tools::Json missing = j;
    missing["seconds"].erase("mad");
    EXPECT_EQ(problem(missing), "JSON: missing key 'mad'");
    EXPECT_THROW(tools::Json::parse("{\"mode\": "), std::exception);
}

// Every read loop folds every 64-bit word of its range exactly once, whatever its streams and
// prefetch: its checksum is the XOR of all words, computed here word by word.
TEST(ReadLoops, EveryLoopReadsEveryWordOnce) {
    const PageBuffer buffer(size_t(1) << 20, false);
    std::mt19937_64 rng(3);
    uint64_t *words = reinterpret_cast<uint64_t *>(buffer.data());
    for (size_t i = 0; i < buffer.size() / 8; ++i) words[i] = rng();
    const std::vector<ReadLoop> &loops = read_loops();
    std::set<std::string> kinds;
    for (const ReadLoop &loop : loops) {
        const std::string name = loop.name;
        ASSERT_EQ(name.rfind(std::string(read_loop_width()) + "-", 0), 0u) << name;
        kinds.insert(name.substr(name.find('-') + 1));
        for (size_t n : {size_t(4096), size_t(12288), buffer.size()}) {
            uint64_t expected = 0;
            for (size_t i = 0; i < n / 8; ++i) expected ^= words[i];
            EXPECT_EQ(loop.read(buffer.data(), n), expected) << name << " over " << n << " bytes";
        }
    }
    EXPECT_EQ(kinds, (std::set<std::string>{"1s", "1s-pf", "2s", "2s-pf"}));
}

// The ceiling at a thread count is the loop with the shortest median, and its record says which
// and what every loop read (no timing is judged: which loop wins is the machine's business).
TEST(ReadLoops, TheCeilingIsTheBestLoop) {
    const PageBuffer buffer(size_t(8) << 20, false);
    StopRule rule;
    rule.min_reps = 3;
    rule.max_seconds = 0.2;
    const ReadCeiling c = measure_read_bandwidth(buffer, 2, rule);
    ASSERT_EQ(c.loop_medians.size(), read_loops().size());
    double best = c.loop_medians.front().second;
    std::string best_name = c.loop_medians.front().first;
    for (const auto &[name, median] : c.loop_medians) {
        EXPECT_GT(median, 0) << name;
        if (median < best) best = median, best_name = name;
    }
    EXPECT_EQ(c.loop, best_name);
    EXPECT_DOUBLE_EQ(c.seconds.median, best);
    EXPECT_GE(c.seconds.reps, 3);
}

TEST(DescribeLine, NamesThePluginServingEachFormat) {
    const std::string line =
        "memra-cpu-experts: backend avxvnni (forced by MEMRA_CPU_EXPERT_BACKEND); f32,q4_0,q8_0: avxvnni; "
        "q2_K,iq3_s: avx2; nvfp4: scalar; plugins: avx512 ok avxvnni ok avx2 ok scalar ok";
    EXPECT_EQ(served_by(line, "q4_0"), "avxvnni");
    EXPECT_EQ(served_by(line, "iq3_s"), "avx2");
    EXPECT_EQ(served_by(line, "nvfp4"), "scalar");
    EXPECT_EQ(served_by(line, "q6_K"), "");
    EXPECT_EQ(served_by("memra-cpu-experts: unusable: no plugin", "f32"), "");
}

Report sample_report() {
    Report rep;
    rep.date = "2026-12-03T09:40:00Z";
    rep.machine = Machine{"Test CPU <&>", 2, 480u << 20};
    rep.read_loop = "avx2";
    rep.options = parse_options({"--quick", "--modes", "all"}).options;
    rep.bandwidth = {sample_record("bandwidth", "read", "", "", 1, 0.1), sample_record("bandwidth", "read", "", "", 2, 0.07),
                     sample_record("bandwidth", "pread", "", "", 1, 1.0)};
    for (Record &r : rep.bandwidth)
        if (r.variant == "read") {  // the best of the read loops (read_loop.h) is the record's figure
            r.read_loop = "avx2-2s-pf";
            r.read_loops = {{"avx2-1s", r.gbps() * 0.9}, {"avx2-2s-pf", r.gbps()}};
        }
    BackendResult b;
    b.name = "avx2";
    b.usable = true;
    b.describe = "memra-cpu-experts: backend avx2";
    for (const char *f : {"q4_K", "iq3_s"})
        for (int32_t t : {1, 2}) b.records.push_back(sample_record("token", "memory", "avx2", f, t, 0.12 / t));
    Record rows = sample_record("rows", "rows", "avx2", "q4_K", 1, 0.3);
    rows.rows = 32;
    rows.relative_to = "token";
    rows.relative = 3.1;
    b.records.push_back(rows);
    rep.backends = {b};
    BackendResult missing;
    missing.name = "avx512";
    missing.reason = "this CPU lacks avx512f";
    rep.backends.push_back(missing);
    attach_ceilings(rep);
    return rep;
}

TEST(Renderings, PassTheOutputChecker) {
    const Report rep = sample_report();
    std::ostringstream json, csv;
    write_json(json, rep);
    write_csv(csv, rep);
    EXPECT_EQ(check_json(json.str(), "bandwidth,token,rows"), "");
    EXPECT_EQ(check_csv(csv.str()), "");
    EXPECT_EQ(check_svg(roofline_svg(rep)), "");
    EXPECT_EQ(csv.str().substr(0, csv.str().find('\n')), csv_header());
    std::ostringstream table;
    print_tables(table, rep);
    EXPECT_NE(table.str().find("backend avx512: not measured: this CPU lacks avx512f"), std::string::npos);
}

// sample_report() with every optional field of a record set somewhere: a file record's
// comparison and exposed wait, peer records with their output errors (one non-finite), a
// backend whose peer was loaded.
Report fixture_report() {
    Report rep = sample_report();
    for (Record &r : rep.bandwidth) {  // fields the old writer did not have
        r.read_loop.clear();
        r.read_loops.clear();
    }
    // Lists of its own, so that a format, plugin or default added to the project leaves the fixture alone.
    rep.options = parse_options({"--quick", "--modes", "all", "--formats", "q4_K,iq3_s", "--backends", "avx2,avx512",
                                 "--rows", "1,8,32,64"}).options;
    BackendResult &b = rep.backends[0];
    Record cold = sample_record("file", "cold", "avx2", "q4_K", 2, 0.25);
    cold.relative_to = "pread";
    cold.relative = 0.75;
    cold.exposed_wait_s = 0.125;
    Record ggml = sample_record("peer_token", "ggml", "avx2", "q4_K", 2, 0.5);
    ggml.relative_to = "memra";
    ggml.relative = 0.5;
    ggml.output_rel_error = 2.5e-7;
    ggml.exact_silu_rel_error = 0;
    ggml.exact_silu_identical = true;
    Record repack = sample_record("peer_token", "ggml_repack", "avx2", "q4_K", 2, 0.5);
    repack.output_rel_error = std::numeric_limits<double>::infinity();
    b.records.insert(b.records.end(), {cold, ggml, repack});
    b.peer = "ggml";
    b.peer_usable = true;
    b.peer_describe = "ggml 0.25.1 (zen4)";
    b.peer_avx2 = true;
    b.errors = {"q4_K: a failed measurement"};
    attach_ceilings(rep);
    return rep;
}

// The --json document is the one the hand-written writer produced before nlohmann-json replaced
// it (fixtures/report-before-nlohmann.json, written by that writer from fixture_report()): the
// same keys in the same order, the same kinds and values (numbers to the 9 digits it printed).
// The document written is left in the build tree for comparison.
TEST(Renderings, JsonIsTheDocumentOfTheHandWrittenWriter) {
    std::ostringstream out;
    write_json(out, fixture_report());
    std::ofstream(MEMRA_BENCH_TEST_OUTPUT_DIR "/report-now.json") << out.str();
    std::ifstream f(MEMRA_BENCH_FIXTURE_DIR "/report-before-nlohmann.json");
    ASSERT_TRUE(f) << "no fixture";
    const tools::Json before = tools::Json::parse(f), now = tools::Json::parse(out.str());
    EXPECT_EQ(tools::json_difference(before, now, tools::JsonMatch::Values), "");
}

TEST(Renderings, CeilingsAndTargetsAreAttached) {
    const Report rep = sample_report();
    EXPECT_NEAR(bandwidth_ceiling(rep, 2), 1e9 / 0.07 / 1e9, 1e-9);
    EXPECT_LT(bandwidth_ceiling(rep, 4), 0);
    Report later = rep;  // the re-measurement after the calls counts when it is higher
    later.bandwidth.push_back(sample_record("bandwidth", "read_end", "", "", 2, 0.05));
    EXPECT_NEAR(bandwidth_ceiling(later, 2), 1e9 / 0.05 / 1e9, 1e-9);
    later.bandwidth.back().seconds = summarize({1.0});
    EXPECT_NEAR(bandwidth_ceiling(later, 2), 1e9 / 0.07 / 1e9, 1e-9);
    later.bandwidth.push_back(sample_record("bandwidth", "read_4k", "", "", 2, 0.04));  // 4 KiB pages won
    EXPECT_NEAR(bandwidth_ceiling(later, 2), 1e9 / 0.04 / 1e9, 1e-9);
    EXPECT_NEAR(rep.backends[0].records[1].ratio_to_bandwidth(), (1 / 0.06) / (1 / 0.07), 1e-9);
    EXPECT_DOUBLE_EQ(bandwidth_target("q4_K"), 0.85);
    EXPECT_DOUBLE_EQ(bandwidth_target("iq3_s"), 0.50);
    EXPECT_LT(bandwidth_target("f32"), 0);
}

// File mode's text table: cold, first pass and steady state each next to the ceilings of the
// same run (issue 18), the ratios computed from the records.
TEST(Renderings, FileTablePutsEachCaseNextToItsCeilings) {
    Report rep = sample_report();
    rep.options = parse_options({"--quick", "--modes", "file", "--threads", "2"}).options;
    std::vector<Record> &r = rep.backends[0].records;
    r.clear();
    auto add = [&](const char *mode, const char *variant, int32_t threads, double seconds) -> Record & {
        r.push_back(sample_record(mode, variant, "avx2", "q4_K", threads, seconds));
        r.back().note.clear();
        return r.back();
    };
    add("file", "pread", 1, 0.5);           // 2 GB/s
    add("file", "pread-cached", 1, 0.1);    // 10 GB/s
    add("file", "first-touch", 1, 0.25);    // 4 GB/s
    add("file", "first-touch-4k", 1, 2.0);  // 0.5 GB/s
    add("file", "first-pass", 2, 1.0);      // 1 GB/s
    add("file", "cold", 2, 1.0).exposed_wait_s = 0.9;
    Record &pref = add("file", "prefetched", 2, 0.4);
    pref.exposed_wait_s = 0.3;
    pref.relative = 0.3 / 0.9;
    Record &warm = add("file", "warm", 2, 0.1);  // 10 GB/s
    warm.relative_to = "memory";
    warm.relative = 0.5;
    add("file", "memory", 2, 0.05);         // 20 GB/s: the memory path, alternating with warm
    std::ostringstream table;
    print_tables(table, rep);
    const std::string t = table.str();
    // The line naming `ceiling` (after `case_name`, when given) holds the ceiling's GB/s and the ratio.
    auto line_of = [&](const std::string &ceiling, const std::string &case_name = "") {
        const size_t at = t.find(ceiling, case_name.empty() ? 0 : t.find(case_name));
        if (at == std::string::npos) return std::string();
        const size_t begin = t.rfind('\n', at) + 1;
        return t.substr(begin, t.find('\n', at) - begin);
    };
    auto shows = [&](const std::string &line, std::initializer_list<const char *> parts) {
        for (const char *p : parts)
            if (line.find(p) == std::string::npos) return false;
        return true;
    };
    EXPECT_TRUE(shows(line_of("pread, page cache dropped"), {"cold", "1.00", "2.00", "50%"})) << t;
    EXPECT_TRUE(shows(line_of("pread, page cache", "first pass"), {"first pass", "1.00", "10.00", "10%"})) << t;
    EXPECT_TRUE(shows(line_of("first touch, huge pages"), {"4.00", "25%"})) << t;
    EXPECT_TRUE(shows(line_of("first touch, 4 KiB pages"), {"0.50", "200%"})) << t;
    EXPECT_TRUE(shows(line_of("memory path, alternating"), {"steady state", "10.00", "20.00", "50%"})) << t;
    EXPECT_TRUE(shows(line_of("pread, page cache", "memory path"), {"10.00", "100%"})) << t;
    EXPECT_TRUE(shows(line_of("exposed wait"), {"prefetched", "300.0 ms against cold's 900.0 ms (33%)"})) << t;
    // The JSON carries the same records, the first-touch ceilings included.
    std::ostringstream json;
    write_json(json, rep);
    EXPECT_EQ(check_json(json.str(), "file"), "");
    EXPECT_NE(json.str().find("\"variant\":\"first-touch-4k\""), std::string::npos);
    // The warm ratio is against the memory-path calls that alternated with it, nothing else: not
    // a token-mode record measured in another phase, and it must be the ratio of the two.
    r.back().mode = "token";
    std::ostringstream other_phase;
    write_json(other_phase, rep);
    EXPECT_NE(check_json(other_phase.str(), "file").find("no file/memory record measured alongside"), std::string::npos);
    r.back().mode = "file";
    r.back().seconds = summarize({0.04});
    std::ostringstream wrong_ratio;
    write_json(wrong_ratio, rep);
    EXPECT_NE(check_json(wrong_ratio.str(), "file").find("relative is not"), std::string::npos);
}

TEST(OutputChecker, FindsWhatIsWrong) {
    EXPECT_NE(check_json("{}", ""), "");
    EXPECT_NE(check_json("not json", ""), "");
    const Report rep = sample_report();
    std::ostringstream json;
    write_json(json, rep);
    EXPECT_NE(check_json(json.str(), "file"), "");  // no file results in the sample
    std::string typo = json.str();
    typo.replace(typo.find("\"threads\":1"), 11, "\"threads\":\"1\"");
    EXPECT_NE(check_json(typo, ""), "");
    EXPECT_NE(check_csv("mode,variant\nx,y\n"), "");
    EXPECT_NE(check_svg("<svg xmlns=\"http://www.w3.org/2000/svg\"><rect/>"), "");
    EXPECT_NE(check_svg("<html/>"), "");
    // A plugin this CPU runs that failed a measurement (memra-bench exits 1 then, too).
    Report failed = sample_report();
    failed.backends[0].errors.push_back("q4_K: status 3: expert 0 gate: short read");
    std::ostringstream failed_json;
    write_json(failed_json, failed);
    EXPECT_NE(check_json(failed_json.str(), ""), "");
}

TEST(WeightStore, ExpertsAreLaidOutAsGgmlTensorsAndTheFileViewPointsAtTheSameBytes) {
    const Shape shape{512, 256};
    const WeightStore store(MEMRA_QTYPE_Q4_K, shape, 3, true, 1);
    // q4_K: 144 bytes per 256 values; gate and up 256 rows of 512, down 512 rows of 256.
    const size_t gate = 256 * 2 * 144, down = 512 * 1 * 144;
    EXPECT_EQ(store.expert_bytes(), 2 * gate + down);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(store.data()) % (2u << 20), 0u);
    // Three tensors gate[3], up[3], down[3], each expert's rows back to back, 64-byte aligned.
    EXPECT_EQ(store.gate(), store.data());
    EXPECT_EQ(store.up(), store.data() + (3 * gate + 63) / 64 * 64);
    EXPECT_EQ(store.down(), store.up() + (3 * gate + 63) / 64 * 64);
    EXPECT_EQ(store.size(), size_t(store.down() - store.data()) + 3 * down);
    const CpuExpertV2 e0 = store.memory_expert(0, 0.5f), e2 = store.memory_expert(2, 0.5f);
    EXPECT_EQ(e0.gate.weights, store.gate());
    EXPECT_EQ(e0.up.weights, store.up());
    EXPECT_EQ(e2.gate.weights, store.gate() + 2 * gate);
    EXPECT_EQ(e2.down.weights, store.down() + 2 * down);
    EXPECT_EQ(e0.route_weight, 0.5f);
    // Expert i is expert 0 with its down rows rotated by 3i: the same rows, in another order.
    const size_t row = 144;
    EXPECT_NE(0, std::memcmp(e0.down.weights, e2.down.weights, e0.down.byte_len));
    EXPECT_EQ(0, std::memcmp(e2.down.weights, e0.down.weights + 6 * row, e0.down.byte_len - 6 * row));
    EXPECT_EQ(0, std::memcmp(e2.down.weights + e0.down.byte_len - 6 * row, e0.down.weights, 6 * row));
    const CpuExpertV2 f2 = store.file_expert(2, 7, 1.0f);
    EXPECT_EQ(f2.down.weights, nullptr);
    EXPECT_EQ(f2.down.file_fd, 7);
    EXPECT_EQ(f2.down.file_offset, uint64_t(e2.down.weights - store.data()));
    EXPECT_EQ(f2.down.byte_len, e2.down.byte_len);
}

TEST(TestFile, HoldsTheBytesAndIsRemovedAfterwards) {
    std::vector<uint8_t> bytes(100000);
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t(i * 7);
    std::string path;
    {
        const TestFile file(::testing::TempDir(), "unit", bytes.data(), bytes.size());
        path = file.path();
        drop_page_cache(file.fd());
        std::vector<uint8_t> back(bytes.size() - 10);
        pread_exact(file.fd(), back.data(), back.size(), 10);
        EXPECT_EQ(0, std::memcmp(back.data(), bytes.data() + 10, back.size()));
        EXPECT_THROW(pread_exact(file.fd(), back.data(), back.size(), 20), std::runtime_error);  // past the end
    }
    EXPECT_NE(::access(path.c_str(), F_OK), 0);
    EXPECT_THROW(TestFile("/nonexistent-dir", "x", bytes.data(), 1), std::runtime_error);
}

TEST(BenchOptions, PeerMeasuresTheBestBackendUnlessTold) {
    ParseOutcome p = parse({"--peer", "GGML"});
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_EQ(p.options.peer, "ggml");
    EXPECT_EQ(p.options.backends, (std::vector<std::string>{"auto"}));
    p = parse({"--peer", "ggml", "--modes", "token", "--backends", "avx2,avx512", "--peer-lib", "/x/peer.so"});
    ASSERT_TRUE(p.ok) << p.error;
    EXPECT_EQ(p.options.backends, (std::vector<std::string>{"avx2", "avx512"}));
    EXPECT_EQ(p.options.peer_lib, "/x/peer.so");
    EXPECT_TRUE(p.options.has(Mode::Bandwidth));  // its ratios need the run's own read bandwidth
    EXPECT_TRUE(parse({}).options.peer.empty());
    p = parse({"--peer", "onnx"});
    EXPECT_FALSE(p.ok);
    EXPECT_NE(p.error.find("unknown peer 'onnx'"), std::string::npos) << p.error;
}

TEST(PeerCompare, ComparesOutputsAsFloats) {
    const float ref[4] = {1.0f, -2.0f, 0.0f, 4.0f};
    const float same[4] = {1.0f, -2.0f, -0.0f, 4.0f};  // -0 equals +0
    EXPECT_TRUE(compare_outputs(ref, same, 4).identical());
    EXPECT_EQ(compare_outputs(ref, same, 4).rel_error, 0);
    const float off[4] = {1.0f, -2.0f, 0.0f, 4.5f};
    const OutputComparison c = compare_outputs(ref, off, 4);
    EXPECT_EQ(c.differing, 1u);
    EXPECT_NEAR(c.rel_error, 0.5 / std::sqrt(21.0), 1e-12);
    EXPECT_NEAR(c.max_abs, 0.5, 1e-12);
    const float nan[4] = {1.0f, std::numeric_limits<float>::quiet_NaN(), 0.0f, 4.0f};
    EXPECT_TRUE(std::isnan(compare_outputs(ref, nan, 4).rel_error));
    const float zeros[2] = {0, 0}, ones[2] = {1, 1};
    EXPECT_TRUE(std::isinf(compare_outputs(zeros, ones, 2).rel_error));
}

// memra's canonical order v2 is not ggml's vec_dot order: every quantized format, step and
// check is held to the bound (a last-bit difference passes, another expert does not).
TEST(PeerCompare, QuantizedFormatsAreWithinTheOrderBound) {
    OutputComparison tiny;
    tiny.differing = 3;
    tiny.rel_error = 1e-7;
    for (const char *f : {"q4_0", "q8_0", "q4_K", "iq3_s", "nvfp4"})
        for (PeerCheck check : {PeerCheck::Shipped, PeerCheck::ExactSilu, PeerCheck::Repacked})
            for (const char *mode : {"peer_token", "peer_rows"}) {
                EXPECT_FALSE(agreement_rule(f, mode, check, true).identical) << f;
                EXPECT_EQ(agreement_problem(f, mode, check, true, tiny), "") << f;
            }
    OutputComparison wrong;
    wrong.differing = 100;
    wrong.rel_error = 0.3;  // another expert or route weight
    for (PeerCheck check : {PeerCheck::Shipped, PeerCheck::ExactSilu, PeerCheck::Repacked})
        for (const char *f : {"f32", "bf16", "q4_K", "iq4_xs"})
            for (bool avx2 : {true, false}) EXPECT_NE(agreement_problem(f, "peer_rows", check, avx2, wrong), "") << f;
    wrong.rel_error = std::numeric_limits<double>::quiet_NaN();
    EXPECT_NE(agreement_problem("f32", "peer_token", PeerCheck::Shipped, true, wrong), "");
}

TEST(PeerCompare, FloatFormatsHaveMeasuredBounds) {
    EXPECT_FALSE(agreement_rule("f32", "peer_token", PeerCheck::ExactSilu, true).identical);
    EXPECT_DOUBLE_EQ(agreement_rule("f32", "peer_token", PeerCheck::Shipped, true).bound, 1e-4);
    EXPECT_DOUBLE_EQ(agreement_rule("bf16", "peer_rows", PeerCheck::ExactSilu, true).bound, 1e-3);
    OutputComparison c;
    c.differing = 5;
    c.rel_error = 5e-4;
    EXPECT_EQ(agreement_problem("bf16", "peer_rows", PeerCheck::Shipped, true, c), "");
    EXPECT_NE(agreement_problem("f32", "peer_rows", PeerCheck::Shipped, true, c), "");
}

TEST(Sampler, AlternatesContendersRoundByRound) {
    const StopRule rule = untimed_rule(4);
    std::string order;
    const std::vector<std::function<double()>> contenders{[&] { order += 'a'; return 1.0; },
                                                          [&] { order += 'b'; return 2.0; }};
    const std::vector<Summary> s = sample_alternating(rule, contenders, [&](size_t i) { order += char('0' + i); });
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[0].reps, 6);  // settled at the first round with a window (5) of medians before it
    EXPECT_EQ(s[1].reps, 6);
    EXPECT_DOUBLE_EQ(s[0].median, 1.0);
    EXPECT_DOUBLE_EQ(s[1].median, 2.0);
    EXPECT_TRUE(s[0].settled && s[1].settled);
    EXPECT_EQ(order.substr(0, 8), "a0b1a0b1");
}

TEST(Sampler, OneDriftingContenderKeepsAllSampling) {
    const StopRule rule = untimed_rule(2, 25);
    double next = 1;
    const std::vector<Summary> s =
        sample_alternating(rule, {[] { return 1.0; }, [&] { return next *= 1.5; }}, nullptr);
    EXPECT_EQ(s[0].reps, 25);
    EXPECT_EQ(s[1].reps, 25);
    EXPECT_FALSE(s[0].settled);
}

TEST(PeerCompare, ReadsTheStateOfATask) {
    EXPECT_EQ(task_state("1234 (memra-bench) S 1 1234 1234 0 -1"), 'S');
    EXPECT_EQ(task_state("99 (a (b) c) R 1 2 3"), 'R');  // the command name may hold ") "
    EXPECT_EQ(task_state("99 (x)"), '?');
    EXPECT_EQ(task_state(""), '?');
}

TEST(PeerCompare, WaitsWhileAnotherThreadRuns) {
    EXPECT_LT(wait_for_idle_threads(5.0), 5.0);  // nothing else runs in the test
    std::atomic<bool> stop{false};
    std::thread spinner([&] {
        while (!stop.load()) {
        }
    });
    EXPECT_GE(wait_for_idle_threads(0.02), 0.02);  // the spinner never sleeps: the cap ends the wait
    stop = true;
    spinner.join();
}

TEST(PeerModule, AMissingModuleSaysHowToGetIt) {
    try {
        GgmlPeer peer("/nonexistent/memra-bench-ggml-peer.so");
        FAIL() << "loaded a module that does not exist";
    } catch (const PeerUnavailable &e) {
        EXPECT_NE(std::string(e.what()).find("fetch-ggml-peer"), std::string::npos) << e.what();
    }
    EXPECT_NE(default_peer_module_path().find("lib/memra-bench-ggml-peer.so"), std::string::npos);
}

Report peer_report() {
    Report rep = sample_report();
    rep.options = parse_options({"--quick", "--modes", "token,rows", "--peer", "ggml"}).options;
    BackendResult &b = rep.backends[0];
    b.peer = "ggml";
    b.peer_usable = true;
    b.peer_describe = "ggml 0.25.1 (0ad4a86), CPU variant zen4";
    b.peer_avx2 = true;
    for (const char *mode : {"peer_token", "peer_rows"}) {
        Record m = sample_record(mode, "memra", "avx2", "q4_K", 2, 0.1);
        Record g = sample_record(mode, "ggml", "avx2", "q4_K", 2, 0.125), rp = sample_record(mode, "ggml_repack", "avx2", "q4_K", 2, 0.2);
        g.output_rel_error = 1e-7;
        g.exact_silu_rel_error = 0;
        g.exact_silu_identical = true;
        rp.output_rel_error = 2e-7;
        m.relative_to = "ggml";
        m.relative = 1.25;
        g.relative_to = rp.relative_to = "memra";
        g.relative = 0.8;
        rp.relative = 0.5;
        for (const Record &r : {m, g, rp}) b.records.push_back(r);
    }
    attach_ceilings(rep);
    return rep;
}

TEST(Renderings, PeerRecordsPassTheCheckerAndShowSideBySide) {
    const Report rep = peer_report();
    std::ostringstream json, csv, table;
    write_json(json, rep);
    write_csv(csv, rep);
    EXPECT_EQ(check_json(json.str(), "token,rows,peer_token,peer_rows"), "");
    EXPECT_EQ(check_csv(csv.str()), "");
    const std::string svg = roofline_svg(rep);
    EXPECT_EQ(check_svg(svg), "");
    EXPECT_NE(svg.find("ggml-cpu repacked"), std::string::npos);
    print_tables(table, rep);
    EXPECT_NE(table.str().find("ggml in backend avx2: ggml 0.25.1"), std::string::npos) << table.str();
    EXPECT_NE(table.str().find("1.25x"), std::string::npos) << table.str();
    // Outputs that disagree beyond the bound fail the checker, and so would the bench (exit status 1).
    std::string bad = json.str();
    const std::string exact_error = "\"exact_silu_rel_error\":0.0,";  // nlohmann-json's zero
    ASSERT_NE(bad.find(exact_error), std::string::npos) << bad;
    bad.replace(bad.find(exact_error), exact_error.size(), "\"exact_silu_rel_error\":0.3,");
    EXPECT_NE(check_json(bad, ""), "");
    Report missing = peer_report();
    missing.backends[0].peer_usable = false;
    missing.backends[0].peer_reason = "ggml peer not built";
    std::ostringstream t2;
    print_tables(t2, missing);
    EXPECT_NE(t2.str().find("not measured: ggml peer not built"), std::string::npos);
}

}  // namespace
}  // namespace memra::bench
