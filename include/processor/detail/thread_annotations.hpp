#pragma once
// detail: not part of the API. Clang thread-safety annotations, as leveldb's
// port/thread_annotations.h: they let `clang -Wthread-safety` check that guarded members are
// used under their mutex and that REQUIRES preconditions hold at every call. They expand to
// nothing on other compilers. https://clang.llvm.org/docs/ThreadSafetyAnalysis.html
//
// The standard library's mutexes carry no annotations: use the annotated wrappers of
// processor/detail/mutex.hpp.

#if defined(__clang__) && defined(__has_attribute)
#if __has_attribute(capability) && __has_attribute(guarded_by) && __has_attribute(requires_capability)
#define PROCESSOR_THREAD_ANNOTATION_(x) __attribute__((x))
#endif
#endif
#ifndef PROCESSOR_THREAD_ANNOTATION_
#define PROCESSOR_THREAD_ANNOTATION_(x)  // no-op
#endif

// On a type: its objects are capabilities (mutexes), named `x` in diagnostics.
#define PROCESSOR_CAPABILITY(x) PROCESSOR_THREAD_ANNOTATION_(capability(x))

// On a type: an RAII object that holds a capability for its lifetime (std::lock_guard).
#define PROCESSOR_SCOPED_CAPABILITY PROCESSOR_THREAD_ANNOTATION_(scoped_lockable)

// On a member: reads need `x` held (shared is enough), writes need it held exclusively.
#define PROCESSOR_GUARDED_BY(x) PROCESSOR_THREAD_ANNOTATION_(guarded_by(x))

// On a pointer member: the pointee is guarded by `x` (the pointer itself is not).
#define PROCESSOR_PT_GUARDED_BY(x) PROCESSOR_THREAD_ANNOTATION_(pt_guarded_by(x))

// On a mutex member: the lock order. These are checked only with -Wthread-safety-beta.
#define PROCESSOR_ACQUIRED_BEFORE(...) PROCESSOR_THREAD_ANNOTATION_(acquired_before(__VA_ARGS__))
#define PROCESSOR_ACQUIRED_AFTER(...) PROCESSOR_THREAD_ANNOTATION_(acquired_after(__VA_ARGS__))

// On a function: the caller must hold the capabilities, exclusively or at least shared.
#define PROCESSOR_REQUIRES(...) PROCESSOR_THREAD_ANNOTATION_(requires_capability(__VA_ARGS__))
#define PROCESSOR_REQUIRES_SHARED(...) PROCESSOR_THREAD_ANNOTATION_(requires_shared_capability(__VA_ARGS__))

// On a function: it acquires or releases the capabilities (none named: `this`).
#define PROCESSOR_ACQUIRE(...) PROCESSOR_THREAD_ANNOTATION_(acquire_capability(__VA_ARGS__))
#define PROCESSOR_ACQUIRE_SHARED(...) PROCESSOR_THREAD_ANNOTATION_(acquire_shared_capability(__VA_ARGS__))
#define PROCESSOR_RELEASE(...) PROCESSOR_THREAD_ANNOTATION_(release_capability(__VA_ARGS__))
#define PROCESSOR_RELEASE_SHARED(...) PROCESSOR_THREAD_ANNOTATION_(release_shared_capability(__VA_ARGS__))

// On a function: it acquires the capabilities when it returns the first argument.
#define PROCESSOR_TRY_ACQUIRE(...) PROCESSOR_THREAD_ANNOTATION_(try_acquire_capability(__VA_ARGS__))

// On a function: the caller must not hold the capabilities (the function takes them).
#define PROCESSOR_EXCLUDES(...) PROCESSOR_THREAD_ANNOTATION_(locks_excluded(__VA_ARGS__))

// On a function: it returns a reference to the capability `x` (an accessor of a private mutex).
#define PROCESSOR_RETURN_CAPABILITY(x) PROCESSOR_THREAD_ANNOTATION_(lock_returned(x))

// On a function: it checks at run time that the capability is held; after a call the analysis
// assumes it is.
#define PROCESSOR_ASSERT_CAPABILITY(x) PROCESSOR_THREAD_ANNOTATION_(assert_capability(x))

// On a function: not analysed. Only for code the analysis cannot follow, with a comment why.
#define PROCESSOR_NO_THREAD_SAFETY_ANALYSIS PROCESSOR_THREAD_ANNOTATION_(no_thread_safety_analysis)
