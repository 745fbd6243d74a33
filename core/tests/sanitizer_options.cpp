// Tests that make the library ask for more memory than exists (to see status 4) need the
// allocator to answer with a null pointer, as glibc does. ASan and TSan abort on such a request
// by default ("requested allocation size exceeds maximum supported size"); these hooks, read by
// the sanitizer runtimes at start-up, make them return null instead. Settings in ASAN_OPTIONS /
// TSAN_OPTIONS still win. Unused in a build without sanitizers.
extern "C" __attribute__((visibility("default"), used)) const char *__asan_default_options() {
    return "allocator_may_return_null=1";
}

extern "C" __attribute__((visibility("default"), used)) const char *__tsan_default_options() {
    return "allocator_may_return_null=1";
}
