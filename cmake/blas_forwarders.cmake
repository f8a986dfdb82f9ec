# Replacement libblas: every BLAS/CBLAS routine that libozdgemm.so does not intercept itself is
# exported as a forwarder into the CPU BLAS, so a program linked with -lozdgemm in place of
# -lblas links and runs, and its DGEMM calls reach the library.
#
# Included by the top-level CMakeLists.txt, after the ozdgemm_interpose target exists and in
# place of setting OZDGEMM_VERSION_SCRIPT by hand. From src/interpose/blas_symbols.txt (one
# name per line, '#' comments) it
#   - generates ${PROJECT_BINARY_DIR}/generated/blas_forwarders.S, one x86-64 trampoline per
#     name (`jmp *slot`, the slot filled on first call by ozdgemm_forward_resolve in
#     src/interpose/blas_forwarders.cpp), and adds it to ozdgemm_interpose;
#   - generates the version script ${PROJECT_BINARY_DIR}/ozdgemm.map from the template
#     cmake/ozdgemm.map, the names in place of its /*@OZDGEMM_BLAS_FORWARDERS@*/ line;
#   - sets OZDGEMM_VERSION_SCRIPT to that script and OZDGEMM_BLAS_FORWARDERS to ON (OFF where
#     there are no trampolines for the target architecture: the library then exports only
#     its own symbols and the -lozdgemm tests are skipped).
# Both files are rewritten only when their content changes; editing the list or the template
# re-runs the configure step.

set(_fwd_list ${PROJECT_SOURCE_DIR}/src/interpose/blas_symbols.txt)
set(_fwd_template ${PROJECT_SOURCE_DIR}/cmake/ozdgemm.map)
set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${_fwd_list} ${_fwd_template})

# Writes `content` to `path` unless the file already holds exactly that (keeps builds
# incremental: the assembler and the link run again only on a real change).
function(_ozdgemm_write_if_changed path content)
  if(EXISTS ${path})
    file(READ ${path} _old)
    if(_old STREQUAL content)
      return()
    endif()
  endif()
  file(WRITE ${path} "${content}")
endfunction()

# The names, validated: each must be a plain C identifier, listed once, and not one of the
# symbols src/interpose/blas_hooks.cpp or level3_hooks.cpp defines (a second definition would not link, and a
# forwarder would bypass the hook).
file(STRINGS ${_fwd_list} _fwd_lines)
set(_fwd_names "")
foreach(_line IN LISTS _fwd_lines)
  string(REGEX REPLACE "#.*$" "" _line "${_line}")
  string(STRIP "${_line}" _line)
  if(_line STREQUAL "")
    continue()
  endif()
  if(NOT _line MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "${_fwd_list}: '${_line}' is not a symbol name")
  endif()
  if(_line MATCHES "^(scipy_)?(cblas_)?[dz](gemm|syrk|herk|syr2k|her2k|symm|hemm|trmm|trsm)(_|64_|_64_)?$"
     OR _line MATCHES "^[DZ](GEMM|SYRK|HERK|SYR2K|HER2K|SYMM|HEMM|TRMM|TRSM)$"
     OR _line MATCHES "^(cblas_)?[dz]gemm_batch_strided_?$" OR _line MATCHES "^[DZ]GEMM_BATCH_STRIDED$")
    message(FATAL_ERROR "${_fwd_list}: ${_line} is intercepted (blas_hooks.cpp, "
                        "level3_hooks.cpp), not forwarded")
  endif()
  if(_line IN_LIST _fwd_names)
    message(FATAL_ERROR "${_fwd_list}: ${_line} listed twice")
  endif()
  list(APPEND _fwd_names ${_line})
endforeach()

if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set(OZDGEMM_BLAS_FORWARDERS ON)
else()
  set(OZDGEMM_BLAS_FORWARDERS OFF)
  message(WARNING "ozdgemm: no BLAS forwarder trampolines for ${CMAKE_SYSTEM_PROCESSOR}; "
                  "libozdgemm.so cannot replace -lblas on this architecture")
endif()

# ---------------------------------------------------------------------------------------------
# Trampolines. Each exported routine is `jmp *slot(%rip)`. A slot first points at a per-routine
# stub that loads the address of its {slot, name} record into r11 (not an argument register
# in the SysV ABI) and enters the common lazy routine, which preserves every register a call
# can pass arguments in (rdi rsi rdx rcx r8 r9, rax = vector count of variadic calls, r10,
# xmm0-7; stack arguments are untouched), calls ozdgemm_forward_resolve(slot, name) on a
# 16-byte aligned stack, restores them and jumps to the address it returned. The caller's
# return address is still on the stack, so the routine returns straight to the caller.
if(OZDGEMM_BLAS_FORWARDERS)
  set(_text "")
  set(_data "")
  set(_rodata "")
  set(_i 0)
  foreach(_name IN LISTS _fwd_names)
    string(APPEND _text
      "        .globl  ${_name}\n"
      "        .type   ${_name}, @function\n"
      "        .p2align 4\n"
      "${_name}:\n"
      "        .cfi_startproc\n"
      "        jmp     *.Lozf_rec_${_i}(%rip)\n"
      "        .cfi_endproc\n"
      "        .size   ${_name}, .-${_name}\n"
      ".Lozf_stub_${_i}:\n"
      "        .cfi_startproc\n"
      "        leaq    .Lozf_rec_${_i}(%rip), %r11\n"
      "        jmp     ozdgemm_forward_lazy\n"
      "        .cfi_endproc\n")
    string(APPEND _data
      ".Lozf_rec_${_i}:\n"
      "        .quad   .Lozf_stub_${_i}\n"
      "        .quad   .Lozf_name_${_i}\n")
    string(APPEND _rodata
      ".Lozf_name_${_i}:\n"
      "        .asciz  \"${_name}\"\n")
    math(EXPR _i "${_i} + 1")
  endforeach()

  set(_asm [=[
/* Generated by cmake/blas_forwarders.cmake from src/interpose/blas_symbols.txt: do not edit.
   BLAS/CBLAS forwarders of libozdgemm.so; see src/interpose/blas_forwarders.cpp. */
        .hidden ozdgemm_forward_resolve
        .text
        .p2align 4
        .type   ozdgemm_forward_lazy, @function
ozdgemm_forward_lazy:
        .cfi_startproc
        pushq   %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        movq    %rsp, %rbp
        .cfi_def_cfa_register %rbp
        pushq   %rdi
        pushq   %rsi
        pushq   %rdx
        pushq   %rcx
        pushq   %r8
        pushq   %r9
        pushq   %rax
        pushq   %r10
        subq    $128, %rsp
        andq    $-16, %rsp
        movaps  %xmm0, 0(%rsp)
        movaps  %xmm1, 16(%rsp)
        movaps  %xmm2, 32(%rsp)
        movaps  %xmm3, 48(%rsp)
        movaps  %xmm4, 64(%rsp)
        movaps  %xmm5, 80(%rsp)
        movaps  %xmm6, 96(%rsp)
        movaps  %xmm7, 112(%rsp)
        movq    %r11, %rdi
        movq    8(%r11), %rsi
        call    ozdgemm_forward_resolve@PLT
        movq    %rax, %r11
        movaps  0(%rsp), %xmm0
        movaps  16(%rsp), %xmm1
        movaps  32(%rsp), %xmm2
        movaps  48(%rsp), %xmm3
        movaps  64(%rsp), %xmm4
        movaps  80(%rsp), %xmm5
        movaps  96(%rsp), %xmm6
        movaps  112(%rsp), %xmm7
        leaq    -64(%rbp), %rsp
        popq    %r10
        popq    %rax
        popq    %r9
        popq    %r8
        popq    %rcx
        popq    %rdx
        popq    %rsi
        popq    %rdi
        popq    %rbp
        .cfi_def_cfa %rsp, 8
        jmpq    *%r11
        .cfi_endproc
        .size   ozdgemm_forward_lazy, .-ozdgemm_forward_lazy

]=])
  string(APPEND _asm "${_text}\n        .data\n        .p2align 3\n${_data}\n"
                     "        .section .rodata\n${_rodata}\n"
                     "        .section .note.GNU-stack,\"\",@progbits\n")
  set(_asm_file ${PROJECT_BINARY_DIR}/generated/blas_forwarders.S)
  _ozdgemm_write_if_changed(${_asm_file} "${_asm}")
  target_sources(ozdgemm_interpose PRIVATE ${_asm_file})
endif()

# ---------------------------------------------------------------------------------------------
# Version script: the template plus the forwarded names.
file(READ ${_fwd_template} _map)
set(_placeholder "/*@OZDGEMM_BLAS_FORWARDERS@*/")
string(FIND "${_map}" "${_placeholder}" _at)
if(_at EQUAL -1)
  message(FATAL_ERROR "${_fwd_template}: no ${_placeholder} line to put the forwarders at")
endif()
set(_globals "")
if(OZDGEMM_BLAS_FORWARDERS)
  foreach(_name IN LISTS _fwd_names)
    string(APPEND _globals "    ${_name};\n")
  endforeach()
endif()
string(REPLACE "    ${_placeholder}\n" "${_globals}" _map "${_map}")
string(REPLACE "${_placeholder}" "" _map "${_map}")
string(PREPEND _map "/* Generated by cmake/blas_forwarders.cmake from cmake/ozdgemm.map: do not edit. */\n")
set(OZDGEMM_VERSION_SCRIPT ${PROJECT_BINARY_DIR}/ozdgemm.map)
_ozdgemm_write_if_changed(${OZDGEMM_VERSION_SCRIPT} "${_map}")

if(OZDGEMM_BLAS_FORWARDERS)
  list(LENGTH _fwd_names _fwd_count)
  message(STATUS "ozdgemm: ${_fwd_count} BLAS/CBLAS forwarders (replacement libblas)")
endif()
