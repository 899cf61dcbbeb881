# Finds librdkafka (PkgConfig::RDKAFKA), 2.12 or newer: Kafka 4's consumer group protocol
# (KIP-848) is generally available from 2.12. Debian 12's own is 2.0.2, so scripts/librdkafka.sh
# (run by scripts/setup.sh) builds a current one from Debian's source package into
# ~/.cache/processor/librdkafka-<version>; this file looks there first.
#
#   PROCESSOR_RDKAFKA_ROOT   a librdkafka install prefix to use. Default: the newest build in the
#                            cache (PROCESSOR_CACHE, else XDG_CACHE_HOME/processor, else
#                            ~/.cache/processor), else whatever pkg-config finds.
# Sets PROCESSOR_RDKAFKA_ROOT_FOUND: the prefix used, or empty for pkg-config's default.
set(PROCESSOR_RDKAFKA_MINIMUM 2.12.0)
set(PROCESSOR_RDKAFKA_ROOT "" CACHE PATH "A librdkafka install prefix (default: the newest in ~/.cache/processor)")

set(PROCESSOR_RDKAFKA_ROOT_FOUND "${PROCESSOR_RDKAFKA_ROOT}")
if(NOT PROCESSOR_RDKAFKA_ROOT_FOUND)
  if(DEFINED ENV{PROCESSOR_CACHE})
    set(_processor_cache "$ENV{PROCESSOR_CACHE}")
  elseif(DEFINED ENV{XDG_CACHE_HOME})
    set(_processor_cache "$ENV{XDG_CACHE_HOME}/processor")
  else()
    set(_processor_cache "$ENV{HOME}/.cache/processor")
  endif()
  file(GLOB _processor_rdkafka_pcs "${_processor_cache}/librdkafka-*/lib/pkgconfig/rdkafka.pc")
  if(_processor_rdkafka_pcs)
    list(SORT _processor_rdkafka_pcs COMPARE NATURAL ORDER DESCENDING)
    list(GET _processor_rdkafka_pcs 0 _processor_rdkafka_pc)
    get_filename_component(PROCESSOR_RDKAFKA_ROOT_FOUND "${_processor_rdkafka_pc}/../../.." ABSOLUTE)
  endif()
endif()
if(PROCESSOR_RDKAFKA_ROOT_FOUND)
  list(PREPEND CMAKE_PREFIX_PATH "${PROCESSOR_RDKAFKA_ROOT_FOUND}")
endif()

pkg_check_modules(RDKAFKA IMPORTED_TARGET rdkafka)
if(NOT RDKAFKA_FOUND)
  message(FATAL_ERROR "librdkafka not found. processor needs librdkafka ${PROCESSOR_RDKAFKA_MINIMUM} or newer: "
                      "run scripts/setup.sh, which builds it from Debian's source package into ~/.cache/processor, "
                      "or set PROCESSOR_RDKAFKA_ROOT to the prefix of one.")
endif()
if(RDKAFKA_VERSION VERSION_LESS PROCESSOR_RDKAFKA_MINIMUM)
  message(FATAL_ERROR "librdkafka ${RDKAFKA_VERSION} found (${RDKAFKA_LIBDIR}), but processor needs "
                      "${PROCESSOR_RDKAFKA_MINIMUM} or newer (Kafka 4's consumer group protocol, KIP-848): run "
                      "scripts/setup.sh, which builds it from Debian's source package into ~/.cache/processor, "
                      "or set PROCESSOR_RDKAFKA_ROOT to the prefix of one.")
endif()
message(STATUS "librdkafka ${RDKAFKA_VERSION}: ${RDKAFKA_LIBDIR}")
