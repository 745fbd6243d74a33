// memra-bench's own logic, without timing anything: option parsing, the statistics, the record
// and JSON round trip, the describe-line reading, and the three renderings against the checker.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <sstream>

#include "json_reader.h"
#include "library.h"
#include "options.h"
#include "output_check.h"
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
    EXPECT_EQ(o.formats.size(), 12u);
    EXPECT_EQ(o.backends, (std::vector<std::string>{"scalar", "avx2", "avxvnni", "avx512"}));
    EXPECT_EQ(o.threads, (std::vector<int32_t>{1, 2}));
    EXPECT_EQ(o.rows, (std::vector<int32_t>{1, 8, 32, 64}));
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

TEST(Sampler, StopsOnceTheMedianSettles) {
    StopRule rule;
    rule.min_reps = 4;
    rule.max_seconds = 1e9;
    const Summary s = sample_until_stable(rule, [] { return 2.0; });
    EXPECT_TRUE(s.settled);
    EXPECT_EQ(s.reps, 6);  // the first median with one `window` (5) samples before it to compare
    EXPECT_DOUBLE_EQ(s.median, 2.0);
}

TEST(Sampler, ADriftingMedianRunsToTheCap) {
    StopRule rule;
    rule.min_reps = 2;
    rule.max_reps = 30;
    rule.max_seconds = 1e9;
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
    std::ostringstream s;
    tools::JsonWriter w(s);
    write_record(w, r);
    const Record back = read_record(json::parse(s.str()));
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

TEST(JsonReader, ReadsNestedValuesAndEscapes) {
    const json::Value v = json::parse(R"( {"a": [1, -2.5e1, true, false, null], "s": "x\"\\\n\u00e9", "o": {}} )");
    ASSERT_TRUE(v.is(json::Value::Type::Object));
    ASSERT_EQ(v.at("a").array.size(), 5u);
    EXPECT_DOUBLE_EQ(v.at("a").array[1].number, -25);
    EXPECT_TRUE(v.at("a").array[2].boolean);
    EXPECT_FALSE(v.at("a").array[3].boolean);
    EXPECT_TRUE(v.at("a").array[4].is(json::Value::Type::Null));
    EXPECT_EQ(v.at("s").string, "x\"\\\n\xc3\xa9");
    EXPECT_TRUE(v.at("o").object.empty());
}

TEST(JsonReader, RejectsMalformedText) {
    for (const char *bad : {"", "{", "[1,]", "{\"a\" 1}", "\"open", "01x", "{} extra", "nan", "+1", "tru"})
        EXPECT_THROW(json::parse(bad), std::runtime_error) << bad;
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
}

TEST(WeightStore, ExpertsAreConsecutiveCopiesAndTheFileViewPointsAtTheSameBytes) {
    const Shape shape{512, 256};
    const WeightStore store(MEMRA_QTYPE_Q4_K, shape, 3, true, 1);
    // q4_K: 144 bytes per 256 values; gate and up 256 rows of 512, down 512 rows of 256.
    EXPECT_EQ(store.expert_bytes(), size_t(2 * 256 * 2 * 144 + 512 * 1 * 144));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(store.data()) % (2u << 20), 0u);
    const CpuExpertV2 e0 = store.memory_expert(0, 0.5f), e2 = store.memory_expert(2, 0.5f);
    EXPECT_EQ(e0.gate.weights, store.data());
    EXPECT_EQ(e0.up.weights, store.data() + e0.gate.byte_len);
    EXPECT_EQ(e2.gate.weights, store.data() + 2 * store.expert_bytes());
    EXPECT_EQ(0, std::memcmp(e0.down.weights, e2.down.weights, e0.down.byte_len));
    EXPECT_EQ(e0.route_weight, 0.5f);
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

}  // namespace
}  // namespace memra::bench
