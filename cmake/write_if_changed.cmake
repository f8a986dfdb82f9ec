# ozdgemm_write_if_changed(path content): writes `content` to `path` unless the file already
# holds exactly that, so that what depends on the file is rebuilt only on a real change. Used at
# configure time (blas_forwarders.cmake) and in script mode (build_commit.cmake).
function(ozdgemm_write_if_changed path content)
  if(EXISTS ${path})
    file(READ ${path} _old)
    if(_old STREQUAL content)
      return()
    endif()
  endif()
  file(WRITE ${path} "${content}")
endfunction()
