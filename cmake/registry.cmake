# SPDX-License-Identifier: BSD-3-Clause
# iok_registry(OUT BACKENDS BUILTIN KERNELS): writes OUT from
# src/core/lib/registry.c.in, the arrays of the backends (those in BUILTIN by
# address, the others modules listed by name) and of the kernels. The
# program's registry lists all that is built; tests/CMakeLists.txt's
# iok_core_only lists the null backend and no kernel.
function(iok_registry out backends builtin kernels)
  set(IOK_DECLS "")
  set(IOK_BACKEND_ENTRIES "")
  foreach(b ${backends})
    if(b IN_LIST builtin)
      string(APPEND IOK_DECLS "extern const struct iok_backend iok_backend_${b};\n")
      string(APPEND IOK_BACKEND_ENTRIES "    {\"${b}\", &iok_backend_${b}, 0},\n")
    else()
      string(APPEND IOK_BACKEND_ENTRIES "    {\"${b}\", NULL, 0},\n")
    endif()
  endforeach()
  set(IOK_KERNEL_ENTRIES "")
  foreach(k ${kernels})
    string(APPEND IOK_DECLS "extern const struct iok_kernel iok_kernel_${k};\n")
    string(APPEND IOK_KERNEL_ENTRIES "    &iok_kernel_${k},\n")
  endforeach()
  configure_file(${PROJECT_SOURCE_DIR}/src/core/lib/registry.c.in ${out} @ONLY)
endfunction()
