#include "numa/topology.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

namespace memra {
namespace {

constexpr int32_t kMaxCpu = 65535;

std::string read_line(const std::string &path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

bool parse_number(const std::string &text, size_t &at, int32_t &value) {
    const size_t start = at;
    int64_t v = 0;
    while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at])) && v <= kMaxCpu)
        v = v * 10 + (text[at++] - '0');
    if (at == start || v > kMaxCpu) return false;
    value = static_cast<int32_t>(v);
    return true;
}

// "Node 0 MemTotal:       24683748 kB" in nodeN/meminfo, in bytes; 0 when absent.
uint64_t node_memory(const std::string &sys, int32_t node) {
    std::ifstream in(sys + "/devices/system/node/node" + std::to_string(node) + "/meminfo");
    std::string line;
    while (std::getline(in, line)) {
        const size_t at = line.find("MemTotal:");
        if (at == std::string::npos) continue;
        std::istringstream fields(line.substr(at + 9));
        uint64_t kib = 0;
        return fields >> kib ? kib * 1024 : 0;
    }
    return 0;
}

// The real nodes with their CPUs; empty when sysfs has no node directory (a kernel without NUMA).
std::vector<NumaNode> real_nodes(const std::string &sys) {
    std::vector<NumaNode> nodes;
    std::vector<int32_t> online;
    const std::string base = sys + "/devices/system/node/";
    if (!parse_cpu_list(read_line(base + "online"), online)) return nodes;
    for (int32_t id : online) {
        NumaNode n;
        n.id = id;
        n.memory_node = id;
        if (!parse_cpu_list(read_line(base + "node" + std::to_string(id) + "/cpulist"), n.cpus)) continue;
        n.memory_bytes = node_memory(sys, id);
        nodes.push_back(std::move(n));
    }
    return nodes;
}

// The memory nodes this process may allocate on (cpusets narrow them); empty when unknown.
std::vector<int32_t> mems_allowed(const std::string &proc) {
    std::ifstream in(proc + "/self/status");
    std::string line;
    std::vector<int32_t> nodes;
    while (std::getline(in, line))
        if (line.rfind("Mems_allowed_list:", 0) == 0) {
            std::string list = line.substr(18);
            list.erase(0, list.find_first_not_of(" \t"));
            if (!parse_cpu_list(list, nodes)) nodes.clear();
        }
    return nodes;
}

int32_t current_memory_policy() {
    int mode = 0;
    if (::syscall(SYS_get_mempolicy, &mode, nullptr, 0UL, nullptr, 0UL) != 0) return 0;
    return mode;
}

const char *policy_name(int32_t mode) {
    static const char *const kNames[] = {"default", "preferred", "bind", "interleave", "local", "preferred-many",
                                         "weighted-interleave"};
    const int32_t base = mode & 0xff;  // without the MPOL_F_* flags
    return base >= 0 && base < int32_t(sizeof kNames / sizeof *kNames) ? kNames[base] : "unknown";
}

}  // namespace

int32_t NumaMachine::node_of_cpu(int32_t cpu) const {
    for (size_t i = 0; i < nodes.size(); ++i)
        if (std::binary_search(nodes[i].cpus.begin(), nodes[i].cpus.end(), cpu)) return static_cast<int32_t>(i);
    return -1;
}

bool parse_cpu_list(const std::string &text, std::vector<int32_t> &out) {
    out.clear();
    size_t at = 0;
    while (at < text.size()) {
        int32_t first, last;
        if (!parse_number(text, at, first)) return false;
        last = first;
        if (at < text.size() && text[at] == '-') {
            ++at;
            if (!parse_number(text, at, last) || last < first) return false;
        }
        for (int32_t c = first; c <= last; ++c) out.push_back(c);
        if (at < text.size() && text[at++] != ',') return false;
        if (at == text.size() && text.back() == ',') return false;
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return true;
}

std::string format_cpu_list(const std::vector<int32_t> &cpus) {
    std::string s;
    for (size_t i = 0; i < cpus.size();) {
        size_t j = i;
        while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
        s += (s.empty() ? "" : ",") + std::to_string(cpus[i]) + (j > i ? "-" + std::to_string(cpus[j]) : "");
        i = j + 1;
    }
    return s;
}

bool parse_fake_topology(const std::string &text, std::vector<NumaNode> &nodes, std::string &error) {
    nodes.clear();
    std::vector<int32_t> seen_cpus;
    std::stringstream parts(text);
    std::string part;
    while (std::getline(parts, part, ';')) {
        const size_t colon = part.find(':');
        NumaNode n;
        size_t at = 0;
        if (colon == std::string::npos || colon == 0 || !parse_number(part, at, n.id) || at != colon ||
            !parse_cpu_list(part.substr(colon + 1), n.cpus) || n.cpus.empty()) {
            error = "'" + part + "' is not NODE:CPULIST (e.g. 0:0-3)";
            return false;
        }
        for (const NumaNode &m : nodes)
            if (m.id == n.id) {
                error = "node " + std::to_string(n.id) + " is given twice";
                return false;
            }
        for (int32_t c : n.cpus) {
            if (std::find(seen_cpus.begin(), seen_cpus.end(), c) != seen_cpus.end()) {
                error = "CPU " + std::to_string(c) + " is in two nodes";
                return false;
            }
            seen_cpus.push_back(c);
        }
        nodes.push_back(std::move(n));
    }
    if (nodes.empty() || text.back() == ';') {
        error = "expected NODE:CPULIST[;NODE:CPULIST...] (e.g. 0:0;1:1)";
        return false;
    }
    std::sort(nodes.begin(), nodes.end(), [](const NumaNode &a, const NumaNode &b) { return a.id < b.id; });
    return true;
}

NumaMachine read_numa_machine(const NumaSources &sources) {
    NumaMachine m;
    std::vector<NumaNode> real = real_nodes(sources.sys);
    if (real.empty()) {  // no NUMA in this kernel: one node, every configured CPU, memory unknown
        NumaNode n;
        n.memory_node = 0;
        const long cpus = ::sysconf(_SC_NPROCESSORS_CONF);
        for (int32_t c = 0; c < std::max<long>(cpus, 1) && c <= kMaxCpu; ++c) n.cpus.push_back(c);
        real.push_back(std::move(n));
        m.notes.push_back("numa: sysfs lists no node: one node");
    }
    if (!sources.fake_topology.empty()) {
        std::string error;  // settings.cpp refused a malformed value already
        if (parse_fake_topology(sources.fake_topology, m.nodes, error)) {
            m.fake = true;
            for (NumaNode &n : m.nodes) {
                const NumaNode *holder = &real.front();
                for (const NumaNode &r : real)
                    if (std::binary_search(r.cpus.begin(), r.cpus.end(), n.cpus.front())) holder = &r;
                n.memory_node = holder->memory_node;
                n.memory_bytes = holder->memory_bytes;
            }
        }
    }
    if (!m.fake) m.nodes = std::move(real);
    m.nodes.erase(std::remove_if(m.nodes.begin(), m.nodes.end(), [](const NumaNode &n) { return n.cpus.empty(); }),
                  m.nodes.end());

    const std::vector<int32_t> mems = mems_allowed(sources.proc);
    for (NumaNode &n : m.nodes)
        n.memory_allowed = mems.empty() || std::find(mems.begin(), mems.end(), n.memory_node) != mems.end();
    const std::string balancing = read_line(sources.proc + "/sys/kernel/numa_balancing");
    m.balancing = !balancing.empty() && balancing != "0";
    m.memory_policy = sources.proc == "/proc" ? current_memory_policy() : 0;
    m.enabled = sources.numa_on && m.nodes.size() > 1;

    std::string list;
    for (const NumaNode &n : m.nodes)
        list += (list.empty() ? "" : "; ") + std::string("node ") + std::to_string(n.id) + " cpus " +
                format_cpu_list(n.cpus) + " memory " + std::to_string(n.memory_bytes >> 20) + " MiB" +
                (m.fake ? " on node " + std::to_string(n.memory_node) : "") + (n.memory_allowed ? "" : " (not allowed)");
    m.notes.push_back(std::string("numa: ") + (m.fake ? "MEMRA_CPU_EXPERT_NUMA_TOPOLOGY" : "sysfs") + ": " + list);
    m.numa_on = sources.numa_on;
    m.notes.push_back("numa: " + numa_action(m));
    if (m.memory_policy != 0) m.notes.push_back("numa: " + numa_policy_note(m));
    if (m.enabled && m.balancing) m.notes.push_back("numa: warning: " + numa_balancing_warning());
    return m;
}

std::string numa_action(const NumaMachine &m) {
    if (!m.numa_on) return "off (MEMRA_CPU_EXPERT_NUMA=off): teams run where the scheduler places them";
    if (!m.enabled) return "one node: teams run where the scheduler places them";
    return "on: a call whose thread may run on several nodes spreads its team over them (helpers pinned node by "
           "node), each node computing its share of every projection's rows; memory is not placed by the library "
           "yet (pages land where the thread that reads them runs)";
}

std::string numa_policy_note(const NumaMachine &m) {
    return std::string("this process set a memory policy (") + policy_name(m.memory_policy) +
           ", e.g. numactl): the library never overrides it";
}

std::string numa_balancing_warning() {
    return "automatic NUMA balancing is on (/proc/sys/kernel/numa_balancing): the kernel moves pages behind the "
           "library's back; 'sysctl kernel.numa_balancing=0' keeps them where they were read";
}

std::vector<NodeCpus> node_view(const NumaMachine &machine, const cpu_set_t &mask) {
    std::vector<NodeCpus> view;
    for (size_t i = 0; i < machine.nodes.size(); ++i) {
        NodeCpus n;
        n.node = static_cast<int32_t>(i);
        CPU_ZERO(&n.cpus);
        for (int32_t c : machine.nodes[i].cpus)
            if (c < CPU_SETSIZE && CPU_ISSET(c, &mask)) {
                CPU_SET(c, &n.cpus);
                ++n.count;
            }
        if (n.count > 0) view.push_back(n);
    }
    return view;
}

}  // namespace memra
