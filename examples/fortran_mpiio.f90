! fortran-mpiio: MPI-IO from Fortran 90 through the "use mpi" module, the
! path a Fortran application takes into the MPI library (which may call the
! PMPI_ entry points directly, so the shim must catch those too). Indented
! with spaces: tabs are not Fortran (gfortran -Wall warns about them).
!
! Each rank writes N double precision values (default 1000) at byte offset
! rank*N*8 of the shared file DIR/fortran.dat with one MPI_File_write_at,
! closes the file, reopens it and reads the values back with one
! MPI_File_read_at, checking them.
!
! usage: fortran-mpiio [-d DIR] [-n N] [N]
!
! Truth (one stdout line per rank, printed with one write + flush):
!   {"example":"fortran-mpiio","rank":R,"files":[{"path":"/abs/fortran.dat",
!    "layer":"mpiio","write_bytes":N*8,"write_ops":1,"read_bytes":N*8,"read_ops":1}]}

! Small helpers the Fortran standard lacks: mkdir -p and realpath through
! libc, JSON string escaping, and a fatal error that ends the whole job.
module fortran_mpiio_util
    use iso_c_binding, only: c_char, c_int, c_ptr, c_null_char, c_associated
    use iso_fortran_env, only: error_unit
    use mpi
    implicit none
    private
    public :: die, make_dirs, real_path, json_escape

    interface
        function c_mkdir(path, mode) bind(C, name='mkdir') result(rc)
            import :: c_char, c_int
            character(kind=c_char), intent(in) :: path(*)
            integer(c_int), value :: mode
            integer(c_int) :: rc
        end function c_mkdir

        function c_realpath(path, resolved) bind(C, name='realpath') result(p)
            import :: c_char, c_ptr
            character(kind=c_char), intent(in) :: path(*)
            character(kind=c_char), intent(out) :: resolved(*)
            type(c_ptr) :: p
        end function c_realpath
    end interface

contains

    subroutine die(rank, msg)
        integer, intent(in) :: rank
        character(len=*), intent(in) :: msg
        integer :: ierr

        write (error_unit, '(a,i0,a,a)') 'fortran-mpiio: rank ', rank, ': ', msg
        flush (error_unit)
        call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
        stop 1
    end subroutine die

    ! Creates DIR and its parents. Failures are not fatal here: "exists" is
    ! fine, and any other problem shows up when the file is opened.
    subroutine make_dirs(dir)
        character(len=*), intent(in) :: dir
        integer :: i, rc

        do i = 2, len_trim(dir)
            if (dir(i:i) == '/') rc = c_mkdir(dir(1:i - 1)//c_null_char, int(o'777', c_int))
        end do
        rc = c_mkdir(trim(dir)//c_null_char, int(o'777', c_int))
    end subroutine make_dirs

    ! The absolute path of an existing file, or '' if realpath fails.
    function real_path(path) result(abs_path)
        character(len=*), intent(in) :: path
        character(len=:), allocatable :: abs_path
        character(kind=c_char) :: buf(4097)
        type(c_ptr) :: p
        integer :: i, n

        buf = c_null_char
        p = c_realpath(trim(path)//c_null_char, buf)
        n = 0
        if (c_associated(p)) then
            do while (n < size(buf) - 1 .and. buf(n + 1) /= c_null_char)
                n = n + 1
            end do
        end if
        allocate (character(len=n) :: abs_path)
        do i = 1, n
            abs_path(i:i) = buf(i)
        end do
    end function real_path

    ! S with '"', '\' and control characters escaped for a JSON string.
    function json_escape(s) result(out)
        character(len=*), intent(in) :: s
        character(len=:), allocatable :: out
        character(len=6) :: hex
        integer :: i, c

        out = ''
        do i = 1, len(s)
            c = iachar(s(i:i))
            if (s(i:i) == '"' .or. s(i:i) == '\') then
                out = out//'\'//s(i:i)
            else if (c < 32) then
                write (hex, '(a,z4.4)') '\u', c
                out = out//hex
            else
                out = out//s(i:i)
            end if
        end do
    end function json_escape

end module fortran_mpiio_util

program fortran_mpiio
    use iso_fortran_env, only: output_unit, int64
    use mpi
    use fortran_mpiio_util
    implicit none

    integer :: rank, ierr
    integer :: n
    character(len=4096) :: dir, path
    character(len=:), allocatable :: abs_path
    double precision, allocatable :: want(:), back(:)
    integer(kind=MPI_OFFSET_KIND) :: offset
    integer(int64) :: nbytes
    integer :: i, fh, got
    integer :: status(MPI_STATUS_SIZE)

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call parse_args(dir, n)

    call make_dirs(trim(dir))
    path = trim(dir)//'/fortran.dat'
    allocate (want(n), back(n))
    do i = 1, n
        want(i) = dble(rank)*dble(n) + dble(i) + 0.5d0
    end do
    offset = int(rank, MPI_OFFSET_KIND)*int(n, MPI_OFFSET_KIND)*8
    nbytes = int(n, int64)*8

    ! Start from an empty file so its size is what this run wrote.
    if (rank == 0) call MPI_File_delete(trim(path), MPI_INFO_NULL, ierr)
    call MPI_Barrier(MPI_COMM_WORLD, ierr)

    call MPI_File_open(MPI_COMM_WORLD, trim(path), MPI_MODE_CREATE + MPI_MODE_WRONLY, &
               MPI_INFO_NULL, fh, ierr)
    call check(ierr, 'MPI_File_open (write)')
    call MPI_File_write_at(fh, offset, want, n, MPI_DOUBLE_PRECISION, status, ierr)
    call check(ierr, 'MPI_File_write_at')
    call MPI_Get_count(status, MPI_DOUBLE_PRECISION, got, ierr)
    if (got /= n) call die(rank, 'short MPI_File_write_at')
    call MPI_File_close(fh, ierr)
    call check(ierr, 'MPI_File_close (write)')

    call MPI_File_open(MPI_COMM_WORLD, trim(path), MPI_MODE_RDONLY, MPI_INFO_NULL, fh, ierr)
    call check(ierr, 'MPI_File_open (read)')
    back = -1.0d0
    call MPI_File_read_at(fh, offset, back, n, MPI_DOUBLE_PRECISION, status, ierr)
    call check(ierr, 'MPI_File_read_at')
    call MPI_Get_count(status, MPI_DOUBLE_PRECISION, got, ierr)
    if (got /= n) call die(rank, 'short MPI_File_read_at')
    call MPI_File_close(fh, ierr)
    call check(ierr, 'MPI_File_close (read)')
    if (any(abs(back - want) > 0.0d0)) call die(rank, 'read back wrong values')

    abs_path = real_path(path)
    if (len(abs_path) == 0) call die(rank, 'realpath failed for '//trim(path))
    call print_truth(rank, abs_path, nbytes)
    call MPI_Finalize(ierr)

contains

    ! -d DIR, -n N, or a bare N; defaults "." and 1000.
    subroutine parse_args(dir_out, n_out)
        character(len=*), intent(out) :: dir_out
        integer, intent(out) :: n_out
        character(len=4096) :: arg
        integer :: k, nargs

        dir_out = '.'
        n_out = 1000
        nargs = command_argument_count()
        k = 1
        do while (k <= nargs)
            call get_command_argument(k, arg)
            if (arg == '-d' .or. arg == '-n') then
                if (k == nargs) call die(rank, trim(arg)//' needs a value')
                k = k + 1
                if (arg == '-d') then
                    call get_command_argument(k, dir_out)
                else
                    call get_command_argument(k, arg)
                    n_out = parse_count(arg)
                end if
            else
                n_out = parse_count(arg)
            end if
            k = k + 1
        end do
    end subroutine parse_args

    integer function parse_count(text)
        character(len=*), intent(in) :: text
        integer :: ios

        read (text, '(i20)', iostat=ios) parse_count
        if (ios /= 0 .or. parse_count < 1) &
            call die(rank, 'N must be a positive whole number, not "'//trim(text)//'"')
    end function parse_count

    subroutine check(rc, what)
        integer, intent(in) :: rc
        character(len=*), intent(in) :: what
        character(len=MPI_MAX_ERROR_STRING) :: msg
        integer :: len_msg, ierr2

        if (rc == MPI_SUCCESS) return
        call MPI_Error_string(rc, msg, len_msg, ierr2)
        call die(rank, what//' '//trim(path)//': '//msg(1:len_msg))
    end subroutine check

    ! One formatted write of the whole line, then a flush: one write(2), so
    ! the lines of different ranks never interleave.
    subroutine print_truth(r, file_path, bytes)
        integer, intent(in) :: r
        character(len=*), intent(in) :: file_path
        integer(int64), intent(in) :: bytes
        character(len=:), allocatable :: line
        character(len=64) :: num_rank, num_bytes

        write (num_rank, '(i0)') r
        write (num_bytes, '(i0)') bytes
        line = '{"example":"fortran-mpiio","rank":'//trim(num_rank)// &
               ',"files":[{"path":"'//json_escape(file_path)// &
               '","layer":"mpiio","write_bytes":'//trim(num_bytes)// &
               ',"write_ops":1,"read_bytes":'//trim(num_bytes)//',"read_ops":1}]}'
        write (output_unit, '(a)') line
        flush (output_unit)
    end subroutine print_truth

end program fortran_mpiio
