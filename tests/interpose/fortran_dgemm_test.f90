! DGEMM called from Fortran (the compiler emits dgemm_ with hidden CHARACTER lengths), every
! transpose spelling, odd sizes, leading dimensions larger than the rows, against an extended-
! precision reference. Plain BLAS client: run with libozdgemm.so preloaded, or linked with
! -lozdgemm. Stops with a non-zero code when a result is wrong.
program fortran_dgemm_test
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
  print '(a, i0, a, i0, a)', 'dgemm: ', cases, ' cases, ', failures, ' failed'
  if (failures /= 0) stop 1

contains

  subroutine run_case(ta, tb, m, n, k, failures)
    character(len=1), intent(in) :: ta, tb
    integer, intent(in) :: m, n, k
    integer, intent(inout) :: failures
    real(dp), allocatable :: a(:, :), b(:, :), c(:, :), c0(:, :), opa(:, :), opb(:, :)
    real(xp) :: s, s_abs, p, want, tol
    real(dp), parameter :: alpha = 0.75_dp, beta = -1.25_dp
    integer :: lda, ldb, ldc, i, j, l, bad
    logical :: trans_a, trans_b

    trans_a = ta /= 'N' .and. ta /= 'n'
    trans_b = tb /= 'N' .and. tb /= 'n'
    if (trans_a) then
      lda = k + 3
      allocate(a(lda, m))
    else
      lda = m + 3
      allocate(a(lda, k))
    end if
    if (trans_b) then
      ldb = n + 2
      allocate(b(ldb, k))
    else
      ldb = k + 2
      allocate(b(ldb, n))
    end if
    ldc = m + 5
    allocate(c(ldc, n), c0(ldc, n))
    call random_number(a)
    call random_number(b)
    call random_number(c)
    a = 2 * a - 1
    b = 2 * b - 1
    c0 = c
    if (trans_a) then
      opa = transpose(a(1:k, 1:m))
    else
      opa = a(1:m, 1:k)
    end if
    if (trans_b) then
      opb = transpose(b(1:n, 1:k))
    else
      opb = b(1:k, 1:n)
    end if

    call dgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)

    bad = 0
    do j = 1, n
      do i = 1, ldc
        if (i > m) then
          if (c(i, j) /= c0(i, j)) bad = bad + 1   ! padding rows must stay untouched
          cycle
        end if
        s = 0
        s_abs = 0
        do l = 1, k
          p = real(opa(i, l), xp) * real(opb(l, j), xp)
          s = s + p
          s_abs = s_abs + abs(p)
        end do
        want = alpha * s + beta * real(c0(i, j), xp)
        tol = 16 * (k + 2) * epsilon(1.0_dp) * (abs(alpha) * s_abs + abs(beta * c0(i, j)))
        if (.not. (abs(c(i, j) - want) <= tol)) then
          bad = bad + 1
          if (bad <= 3) print '(a, a, a, a, 2(i0, a), es24.16, a, es10.3)', 'FAIL ', ta, tb, &
              ' C(', i, ',', j, ') = ', c(i, j), ' error ', real(abs(c(i, j) - want), dp)
        end if
      end do
    end do
    if (bad /= 0) failures = failures + 1

  end subroutine run_case

end program fortran_dgemm_test
