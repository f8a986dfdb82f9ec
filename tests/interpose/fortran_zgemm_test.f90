! ZGEMM called from Fortran (zgemm_ with hidden CHARACTER lengths), every transpose spelling
! (C: conjugate transpose), odd sizes, leading dimensions larger than the rows, complex alpha and
! beta, against an extended-precision reference. Plain BLAS client: run with libozdgemm.so
! preloaded, or linked with -lozdgemm. Stops with a non-zero code when a result is wrong.
program fortran_zgemm_test
  implicit none
  integer, parameter :: dp = kind(1.0d0), xp = selected_real_kind(18)
  character(len=1), parameter :: ops(6) = ['N', 'T', 'C', 'n', 't', 'c']
  integer, parameter :: shapes(3, 3) = reshape([7, 5, 3, 13, 11, 17, 1, 9, 4], [3, 3])
  integer :: x, y, s, failures, cases

  failures = 0
  cases = 0
  do s = 1, 3
    do x = 1, 6
      do y = 1, 6
        call run_case(ops(x), ops(y), shapes(1, s), shapes(2, s), shapes(3, s), failures)
        cases = cases + 1
      end do
    end do
  end do
  print '(a, i0, a, i0, a)', 'zgemm: ', cases, ' cases, ', failures, ' failed'
  if (failures /= 0) stop 1

contains

  ! op(X)(i, j) of X(ld, *).
  complex(xp) function op_at(x, op, i, j)
    complex(dp), intent(in) :: x(:, :)
    character(len=1), intent(in) :: op
    integer, intent(in) :: i, j
    if (op == 'N' .or. op == 'n') then
      op_at = x(i, j)
    else if (op == 'T' .or. op == 't') then
      op_at = x(j, i)
    else
      op_at = conjg(x(j, i))
    end if
  end function op_at

  subroutine random_complex(z)
    complex(dp), intent(out) :: z(:, :)
    real(dp), allocatable :: re(:, :), im(:, :)
    allocate(re(size(z, 1), size(z, 2)), im(size(z, 1), size(z, 2)))
    call random_number(re)
    call random_number(im)
    z = cmplx(2 * re - 1, 2 * im - 1, kind=dp)
  end subroutine random_complex

  subroutine run_case(ta, tb, m, n, k, failures)
    character(len=1), intent(in) :: ta, tb
    integer, intent(in) :: m, n, k
    integer, intent(inout) :: failures
    complex(dp), allocatable :: a(:, :), b(:, :), c(:, :), c0(:, :)
    complex(dp), parameter :: alpha = (0.75_dp, -0.25_dp), beta = (-1.25_dp, 0.5_dp)
    complex(xp) :: s, want
    real(xp) :: mag, tol
    integer :: lda, ldb, ldc, i, j, l, bad

    if (ta == 'N' .or. ta == 'n') then
      lda = m + 3
      allocate(a(lda, k))
    else
      lda = k + 3
      allocate(a(lda, m))
    end if
    if (tb == 'N' .or. tb == 'n') then
      ldb = k + 2
      allocate(b(ldb, n))
    else
      ldb = n + 2
      allocate(b(ldb, k))
    end if
    ldc = m + 5
    allocate(c(ldc, n), c0(ldc, n))
    call random_complex(a)
    call random_complex(b)
    call random_complex(c)
    c0 = c
    call zgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
    bad = 0
    do j = 1, n
      do i = 1, ldc
        if (i > m) then
          if (c(i, j) /= c0(i, j)) bad = bad + 1
          cycle
        end if
        s = 0
        mag = 0
        do l = 1, k
          s = s + op_at(a, ta, i, l) * op_at(b, tb, l, j)
          mag = mag + abs(op_at(a, ta, i, l)) * abs(op_at(b, tb, l, j))
        end do
        want = alpha * s + beta * c0(i, j)
        tol = 64 * (k + 2) * epsilon(1.0_dp) * (abs(alpha) * mag + abs(beta) * abs(c0(i, j)))
        if (abs(real(c(i, j), xp) - real(want)) > tol .or. &
            abs(aimag(c(i, j)) - aimag(want)) > tol) bad = bad + 1
      end do
    end do
    if (bad /= 0) then
      print '(a, a, a, a, 3(a, i0), a, i0)', 'FAIL ', ta, tb, ':', ' m=', m, ' n=', n, ' k=', k, &
        ' bad elements: ', bad
      failures = failures + 1
    end if
  end subroutine run_case

end program fortran_zgemm_test
