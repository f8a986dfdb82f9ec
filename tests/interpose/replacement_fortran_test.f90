! A Fortran BLAS client linked with -lozdgemm in place of -lblas: level-1/2/3 routines served by
! the library's forwarders into the CPU BLAS (DDOT, DAXPY, DSCAL, DNRM2, IDAMAX, DGEMV, DTRSM)
! and DGEMM through the library, each checked against an extended-precision loop. Stops with
! a non-zero code when a result is wrong.
program replacement_fortran_test
  implicit none
  integer, parameter :: dp = kind(1.0d0), xp = selected_real_kind(18)
  integer, parameter :: n = 29, m = 8, k = 6
  real(dp) :: x(n), y(n), z(n), a(m + 2, k), b(m + 1, k), c(m + 3, m), c0(m + 3, m)
  real(dp) :: t(k, k), rhs(k, 3), rhs0(k, 3), v(m), v0(m)
  real(dp), external :: ddot, dnrm2
  integer, external :: idamax
  real(xp) :: s, want, scale
  integer :: i, j, l, failures

  failures = 0
  call random_number(x)
  call random_number(y)
  x = 2 * x - 1
  y = 2 * y - 1

  call check('ddot', real(ddot(n, x, 1, y, 1), xp), sum(real(x, xp) * real(y, xp)), &
             sum(abs(real(x, xp) * real(y, xp))))
  call check('dnrm2', real(dnrm2(n, x, 1), xp), sqrt(sum(real(x, xp)**2)), sqrt(sum(real(x, xp)**2)))
  if (idamax(n, x, 1) /= maxloc(abs(x), 1)) then
    print *, 'FAIL idamax', idamax(n, x, 1), maxloc(abs(x), 1)
    failures = failures + 1
  end if

  z = y
  call daxpy(n, -0.5_dp, x, 1, z, 1)
  call dscal(n, 4.0_dp, z, 1)
  do i = 1, n
    call check('daxpy/dscal', real(z(i), xp), 4 * (-0.5_xp * x(i) + y(i)), 4.0_xp)
  end do

  ! DGEMV: v = 1.5 A x + 0.25 v, A is m x k (leading dimension m + 2)
  call random_number(a)
  call random_number(v)
  v0 = v
  call dgemv('N', m, k, 1.5_dp, a, m + 2, x, 1, 0.25_dp, v, 1)
  do i = 1, m
    s = sum(real(a(i, 1:k), xp) * real(x(1:k), xp))
    call check('dgemv', real(v(i), xp), 1.5_xp * s + 0.25_xp * v0(i), 2 * real(k, xp))
  end do

  ! DTRSM: solve T X = rhs, T upper triangular with a dominant diagonal
  call random_number(t)
  do i = 1, k
    t(i, i) = t(i, i) + k
  end do
  call random_number(rhs)
  rhs0 = rhs
  call dtrsm('L', 'U', 'N', 'N', k, 3, 1.0_dp, t, k, rhs, k)
  do j = 1, 3
    do i = 1, k
      s = 0
      do l = i, k
        s = s + real(t(i, l), xp) * real(rhs(l, j), xp)
      end do
      call check('dtrsm', s, real(rhs0(i, j), xp), real(k, xp))
    end do
  end do

  ! DGEMM through the library: C = 0.5 A B^T - C, A and B are m x k
  call random_number(b)
  call random_number(c)
  c0 = c
  call dgemm('N', 'T', m, m, k, 0.5_dp, a, m + 2, b, m + 1, -1.0_dp, c, m + 3)
  do j = 1, m
    do i = 1, m + 3
      if (i > m) then
        if (c(i, j) /= c0(i, j)) then
          print *, 'FAIL dgemm: padding changed at', i, j
          failures = failures + 1
        end if
        cycle
      end if
      s = 0
      scale = 0
      do l = 1, k
        s = s + real(a(i, l), xp) * real(b(j, l), xp)
        scale = scale + abs(real(a(i, l), xp) * real(b(j, l), xp))
      end do
      want = 0.5_xp * s - c0(i, j)
      call check('dgemm', real(c(i, j), xp), want, 0.5_xp * scale + abs(c0(i, j)))
    end do
  end do

  print '(a, i0, a)', 'replacement libblas (Fortran): ', failures, ' failures'
  if (failures /= 0) stop 1

contains

  subroutine check(what, got, want, scale)
    character(len=*), intent(in) :: what
    real(xp), intent(in) :: got, want, scale
    if (.not. (abs(got - want) <= 64 * epsilon(1.0_dp) * max(scale, 1.0_xp))) then
      print '(3a, 2es26.17)', 'FAIL ', what, ': got, want ', got, want
      failures = failures + 1
    end if
  end subroutine check

end program replacement_fortran_test
