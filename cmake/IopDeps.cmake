# Every external library, found through pkg-config (Debian's -dev packages,
# installed by scripts/install-deps). Imported targets: PkgConfig::<NAME>.
find_package(PkgConfig REQUIRED)
pkg_check_modules(SODIUM   REQUIRED IMPORTED_TARGET libsodium)
pkg_check_modules(XXHASH   REQUIRED IMPORTED_TARGET libxxhash)
pkg_check_modules(ZSTD     REQUIRED IMPORTED_TARGET libzstd)
pkg_check_modules(NANOMSG  REQUIRED IMPORTED_TARGET nanomsg)
pkg_check_modules(JANSSON  REQUIRED IMPORTED_TARGET jansson)
pkg_check_modules(CMOCKA   REQUIRED IMPORTED_TARGET cmocka)
pkg_check_modules(NCURSESW REQUIRED IMPORTED_TARGET ncursesw)
pkg_check_modules(UNWIND   REQUIRED IMPORTED_TARGET libunwind)
find_package(Threads REQUIRED)

# MPI: OpenMPI by default, MPICH with -DIOP_MPI=mpich. Debian installs both
# side by side; pick the wrapper compiler explicitly so FindMPI cannot mix them.
if(IOP_MPI STREQUAL "mpich")
  set(MPI_C_COMPILER mpicc.mpich CACHE FILEPATH "" FORCE)
  set(MPIEXEC_EXECUTABLE /usr/bin/mpiexec.mpich CACHE FILEPATH "" FORCE)
elseif(IOP_MPI STREQUAL "openmpi")
  set(MPI_C_COMPILER mpicc.openmpi CACHE FILEPATH "" FORCE)
  set(MPIEXEC_EXECUTABLE /usr/bin/mpiexec.openmpi CACHE FILEPATH "" FORCE)
else()
  message(FATAL_ERROR "IOP_MPI must be openmpi or mpich, not '${IOP_MPI}'")
endif()
find_package(MPI REQUIRED COMPONENTS C)
message(STATUS "iopulse: MPI ${IOP_MPI} (${MPI_C_COMPILER}), MPI-${MPI_C_VERSION}")
