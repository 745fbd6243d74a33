#include "suite_backends.h"

#include <gtest/gtest.h>

#include "dispatch/settings.h"

namespace memra::conformance {

const BackendSet &build_backends() {
    static const BackendSet set = [] {
        BackendLocations where;
        where.library_backend_dir = MEMRA_BACKEND_BUILD_DIR;
        where.test_backend_dir = MEMRA_TEST_BACKEND_BUILD_DIR;
        return BackendSet(where, detect_cpu_features(), read_settings().disabled_features);
    }();
    return set;
}

std::vector<std::string> subject_names() {
    std::vector<std::string> names;
    for (const Backend &b : build_backends().subjects()) names.push_back(b.plugin_name);
    return names;
}

void use_backend(const std::string &plugin_name, const Backend *&reference, const Backend *&subject) {
    reference = build_backends().reference();
    ASSERT_NE(reference, nullptr) << build_backends().problem();
    subject = nullptr;
    for (const Backend &b : build_backends().subjects())
        if (b.plugin_name == plugin_name) subject = &b;
    ASSERT_NE(subject, nullptr) << "no backend " << plugin_name;
    // Skip only where this CPU lacks a feature the plugin needs; a broken plugin fails.
    ASSERT_FALSE(subject->broken) << subject->label << " is broken: " << subject->skip_reason;
    if (!subject->runnable()) GTEST_SKIP() << subject->label << ": " << subject->skip_reason;
}

}  // namespace memra::conformance
