#include "svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace memra::bench {
namespace {

// Colour-blind-safe (Okabe-Ito) colours, one per plugin in the order they appear.
const char *const kColours[] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9"};

std::string escape(const std::string &s) {
    std::string out;
    for (char c : s) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        default: out += c;
        }
    }
    return out;
}

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}

// "20" rather than "20.0"; fractional steps keep their digits.
std::string tick_label(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

// A tick step of 1, 2 or 5 times a power of ten giving at most about 8 ticks up to top.
double tick_step(double top) {
    const double raw = top / 8;
    const double p = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * p >= raw) return m * p;
    return 10 * p;
}

template <class T>
void add_unique(std::vector<T> &v, const T &x) {
    if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

// The series a token-path bar belongs to: the plugin for memra's token records; "ggml-cpu" and
// "ggml-cpu repacked" for the peer's (--peer ggml; those of the first backend child that ran it).
std::string series_of(const Record &r) {
    if (r.mode == "token") return r.backend;
    return r.variant == "ggml_repack" ? "ggml-cpu repacked" : "ggml-cpu";
}

}  // namespace

std::string roofline_svg(const Report &rep) {
    std::vector<std::string> formats, backends;
    std::vector<int32_t> threads;
    std::vector<const Record *> token;
    std::string peer_backend;
    for (const BackendResult &b : rep.backends)
        for (const Record &r : b.records) {
            const bool peer = r.mode == "peer_token" && r.variant != "memra";
            if (peer && peer_backend.empty()) peer_backend = b.name;
            if (r.mode == "token" || (peer && b.name == peer_backend)) {
                token.push_back(&r);
                add_unique(threads, r.threads);
            }
        }
    // memra's plugins first, the peer's series after them.
    for (int pass = 0; pass < 2; ++pass)
        for (const Record *r : token)
            if ((r->mode == "token") == (pass == 0)) add_unique(backends, series_of(*r));
    for (int32_t q : rep.options.formats)
        for (const Record *r : token)
            if (r->format == format_name(q)) add_unique(formats, r->format);
    std::sort(threads.begin(), threads.end());
    const int32_t bar_threads = threads.empty() ? 1 : threads.back();

    double top = 1;
    for (const Record *r : token) top = std::max(top, r->gbps_high());
    for (int32_t t : threads) top = std::max(top, bandwidth_ceiling(rep, t));
    const double step = tick_step(top * 1.08);
    top = std::ceil(top * 1.08 / step) * step;

    const double left = 80, right = 230, upper = 60, lower = 70;
    const double group_w = std::max(48.0, 14.0 * double(std::max<size_t>(1, backends.size())) + 16);
    const double plot_w = std::max(360.0, group_w * double(std::max<size_t>(1, formats.size())));
    const double plot_h = 360;
    const double width = left + plot_w + right, height = upper + plot_h + lower;
    auto y_of = [&](double gbps) { return upper + plot_h * (1 - gbps / top); };

    std::ostringstream s;
    s << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width) << "\" height=\"" << num(height)
      << "\" viewBox=\"0 0 " << num(width) << ' ' << num(height)
      << "\" font-family=\"DejaVu Sans, Arial, sans-serif\" font-size=\"12\">\n"
      << "<rect x=\"0\" y=\"0\" width=\"" << num(width) << "\" height=\"" << num(height) << "\" fill=\"white\"/>\n";
    s << "<text x=\"" << num(left) << "\" y=\"24\" font-size=\"15\" font-weight=\"bold\">"
      << escape("memra-bench: token path vs measured read bandwidth") << "</text>\n"
      << "<text x=\"" << num(left) << "\" y=\"42\" fill=\"#444\">"
      << escape(rep.date + ", " + rep.machine.cpu_model + ", " + std::to_string(rep.options.experts) +
                " experts/call, n_embd " + std::to_string(rep.options.shape.n_embd) + ", n_ff " +
                std::to_string(rep.options.shape.n_ff))
      << "</text>\n";

    // Grid and y axis.
    for (double v = 0; v <= top + step / 2; v += step) {
        const double y = y_of(v);
        s << "<line x1=\"" << num(left) << "\" y1=\"" << num(y) << "\" x2=\"" << num(left + plot_w) << "\" y2=\""
          << num(y) << "\" stroke=\"#e4e4e4\"/>\n"
          << "<text x=\"" << num(left - 6) << "\" y=\"" << num(y + 4) << "\" text-anchor=\"end\">" << tick_label(v)
          << "</text>\n";
    }
    s << "<line x1=\"" << num(left) << "\" y1=\"" << num(upper) << "\" x2=\"" << num(left) << "\" y2=\""
      << num(upper + plot_h) << "\" stroke=\"black\"/>\n"
      << "<line x1=\"" << num(left) << "\" y1=\"" << num(upper + plot_h) << "\" x2=\"" << num(left + plot_w)
      << "\" y2=\"" << num(upper + plot_h) << "\" stroke=\"black\"/>\n"
      << "<text transform=\"translate(22," << num(upper + plot_h / 2) << ") rotate(-90)\" text-anchor=\"middle\">"
      << "weight bytes read per second (GB/s)</text>\n"
      << "<text x=\"" << num(left + plot_w / 2) << "\" y=\"" << num(height - 18)
      << "\" text-anchor=\"middle\">weight format (bars: " << bar_threads << " thread" << (bar_threads == 1 ? "" : "s")
      << "; dots: fewer threads)</text>\n";

    // Bars and dots, one group per format.
    const double bar_w = (group_w - 16) / double(std::max<size_t>(1, backends.size()));
    for (size_t f = 0; f < formats.size(); ++f) {
        const double gx = left + group_w * double(f) + 8;
        s << "<text x=\"" << num(gx + (group_w - 16) / 2) << "\" y=\"" << num(upper + plot_h + 18)
          << "\" text-anchor=\"middle\">" << escape(formats[f]) << "</text>\n";
        for (size_t b = 0; b < backends.size(); ++b) {
            const char *colour = kColours[b % (sizeof kColours / sizeof *kColours)];
            const double x = gx + bar_w * double(b);
            for (const Record *r : token) {
                if (r->format != formats[f] || series_of(*r) != backends[b]) continue;
                const double y = y_of(r->gbps());
                if (r->threads == bar_threads) {
                    s << "<rect x=\"" << num(x + 1) << "\" y=\"" << num(y) << "\" width=\"" << num(bar_w - 2)
                      << "\" height=\"" << num(upper + plot_h - y) << "\" fill=\"" << colour << "\"><title>"
                      << escape(r->format + " " + backends[b] + " " + std::to_string(r->threads) + "t: " +
                                num(r->gbps()) + " GB/s")
                      << "</title></rect>\n";
                } else {
                    s << "<circle cx=\"" << num(x + bar_w / 2) << "\" cy=\"" << num(y) << "\" r=\"3.5\" fill=\"white\" "
                      << "stroke=\"black\" stroke-width=\"1.2\"><title>"
                      << escape(r->format + " " + backends[b] + " " + std::to_string(r->threads) + "t: " +
                                num(r->gbps()) + " GB/s")
                      << "</title></circle>\n";
                }
            }
        }
    }

    // Ceilings: the measured read bandwidth at each thread count.
    for (size_t i = 0; i < threads.size(); ++i) {
        const double c = bandwidth_ceiling(rep, threads[i]);
        if (c <= 0) continue;
        const double y = y_of(c);
        s << "<line x1=\"" << num(left) << "\" y1=\"" << num(y) << "\" x2=\"" << num(left + plot_w) << "\" y2=\""
          << num(y) << "\" stroke=\"#B00020\" stroke-width=\"1.5\" stroke-dasharray=\""
          << (threads[i] == bar_threads ? "8 4" : "3 3") << "\"/>\n"
          << "<text x=\"" << num(left + plot_w + 6) << "\" y=\"" << num(y + 4) << "\" fill=\"#B00020\">"
          << "read bandwidth, " << threads[i] << " thr: " << num(c) << " GB/s</text>\n";
    }

    // Legend, at the foot of the right margin (the ceiling labels sit near the top).
    double ly = upper + plot_h - 18.0 * double(backends.size() + 1);
    s << "<text x=\"" << num(left + plot_w + 6) << "\" y=\"" << num(ly) << "\" font-weight=\"bold\">"
      << (peer_backend.empty() ? "plugin" : "plugin / peer") << "</text>\n";
    for (size_t b = 0; b < backends.size(); ++b) {
        ly += 18;
        s << "<rect x=\"" << num(left + plot_w + 6) << "\" y=\"" << num(ly - 10) << "\" width=\"12\" height=\"12\" fill=\""
          << kColours[b % (sizeof kColours / sizeof *kColours)] << "\"/>\n"
          << "<text x=\"" << num(left + plot_w + 24) << "\" y=\"" << num(ly) << "\">" << escape(backends[b])
          << "</text>\n";
    }
    if (formats.empty())
        s << "<text x=\"" << num(left + plot_w / 2) << "\" y=\"" << num(upper + plot_h / 2)
          << "\" text-anchor=\"middle\">no token-path results</text>\n";
    s << "</svg>\n";
    return s.str();
}

}  // namespace memra::bench
