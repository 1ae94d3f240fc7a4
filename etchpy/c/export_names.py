"""Which names an exported kernel may have.

The files `export_c` writes declare, at file scope, the function `name`, and
`name_free`, `name_idx_t`, `name_val_t`, `name_restrict` and `name_H`; every
other file-scope identifier and macro starts with `ep_` or `EP_` (kernel.c.j2).
A name is refused when it could collide with anything else a C11 or C++17
compiler sees in those files: names starting with `ep_` (any case), an underscore
or `omp_`, names ending in `_t` (POSIX reserves them for types) or holding `__`
(C++ reserves them), keywords of C11, C23 and C++17 (alternative tokens
included), `main`, and every name the headers the files include declare
(stdint.h, stdlib.h, string.h, math.h, complex.h, omp.h, sys/mman.h; the SIMD headers
declare only names starting with an underscore), and the library functions C
compilers treat as built-ins (printf, isalpha, ...), which -Wall reports when
declared otherwise. The list was read from glibc's headers with _DEFAULT_SOURCE
(their functions, types, variables, enum constants, tags and macros) and from
GCC's warnings; it holds the C standard's names for those headers.
"""
from __future__ import annotations

from ..errors import EtchpyError

C_KEYWORDS = frozenset("""
auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef
union unsigned void volatile while
alignas alignof bool constexpr false nullptr static_assert thread_local true typeof
typeof_unqual
""".split())

CXX_KEYWORDS = frozenset("""
asm catch char16_t char32_t class const_cast decltype delete dynamic_cast explicit export
friend mutable namespace new noexcept operator private protected public reinterpret_cast
static_cast template this throw try typeid typename using virtual wchar_t
and and_eq bitand bitor compl not not_eq or or_eq xor xor_eq
""".split())

# declared (as functions, types, variables, constants, tags or macros) by the
# headers the generated files include; the library functions GCC knows as
# built-ins (it warns on any other declaration of them, header or not); and
# C++'s namespace std (declared before any header). Names with a leading
# underscore, an `omp_` prefix or a `_t` suffix are refused by rule, not listed.
HEADER_NAMES = frozenset("""
BIG_ENDIAN BYTE_ORDER EXIT_FAILURE EXIT_SUCCESS FD_CLR FD_ISSET FD_SET FD_SETSIZE FD_ZERO
FP_ILOGB0 FP_ILOGBNAN FP_INFINITE FP_NAN FP_NORMAL FP_SUBNORMAL FP_ZERO HUGE_VAL HUGE_VALF
HUGE_VALL INFINITY INT16_C INT16_MAX INT16_MIN INT32_C INT32_MAX INT32_MIN INT64_C INT64_MAX
INT64_MIN INT8_C INT8_MAX INT8_MIN INTMAX_C INTMAX_MAX INTMAX_MIN INTPTR_MAX INTPTR_MIN
INT_FAST16_MAX INT_FAST16_MIN INT_FAST32_MAX INT_FAST32_MIN INT_FAST64_MAX INT_FAST64_MIN
INT_FAST8_MAX INT_FAST8_MIN INT_LEAST16_MAX INT_LEAST16_MIN INT_LEAST32_MAX INT_LEAST32_MIN
INT_LEAST64_MAX INT_LEAST64_MIN INT_LEAST8_MAX INT_LEAST8_MIN LITTLE_ENDIAN MADV_COLD
MADV_DODUMP MADV_DOFORK MADV_DONTDUMP MADV_DONTFORK MADV_DONTNEED MADV_DONTNEED_LOCKED
MADV_FREE MADV_HUGEPAGE MADV_HWPOISON MADV_KEEPONFORK MADV_MERGEABLE MADV_NOHUGEPAGE
MADV_NORMAL MADV_PAGEOUT MADV_POPULATE_READ MADV_POPULATE_WRITE MADV_RANDOM MADV_REMOVE
MADV_SEQUENTIAL MADV_UNMERGEABLE MADV_WILLNEED MADV_WIPEONFORK MAP_32BIT MAP_ANON
MAP_ANONYMOUS MAP_DENYWRITE MAP_EXECUTABLE MAP_FAILED MAP_FILE MAP_FIXED MAP_FIXED_NOREPLACE
MAP_GROWSDOWN MAP_HUGETLB MAP_HUGE_MASK MAP_HUGE_SHIFT MAP_LOCKED MAP_NONBLOCK MAP_NORESERVE
MAP_POPULATE MAP_PRIVATE MAP_SHARED MAP_SHARED_VALIDATE MAP_STACK MAP_SYNC MAP_TYPE
MATH_ERREXCEPT MATH_ERRNO MB_CUR_MAX MCL_CURRENT MCL_FUTURE MCL_ONFAULT MS_ASYNC
MS_INVALIDATE MS_SYNC M_1_PI M_2_PI M_2_SQRTPI M_E M_LN10 M_LN2 M_LOG10E M_LOG2E M_PI M_PI_2
M_PI_4 M_SQRT1_2 M_SQRT2 NAN NFDBITS NULL PDP_ENDIAN POSIX_MADV_DONTNEED POSIX_MADV_NORMAL
POSIX_MADV_RANDOM POSIX_MADV_SEQUENTIAL POSIX_MADV_WILLNEED PROT_EXEC PROT_GROWSDOWN
PROT_GROWSUP PROT_NONE PROT_READ PROT_WRITE PTRDIFF_MAX PTRDIFF_MIN RAND_MAX SIG_ATOMIC_MAX
SIG_ATOMIC_MIN SIZE_MAX UINT16_C UINT16_MAX UINT32_C UINT32_MAX UINT64_C UINT64_MAX UINT8_C
UINT8_MAX UINTMAX_C UINTMAX_MAX UINTPTR_MAX UINT_FAST16_MAX UINT_FAST32_MAX UINT_FAST64_MAX
UINT_FAST8_MAX UINT_LEAST16_MAX UINT_LEAST32_MAX UINT_LEAST64_MAX UINT_LEAST8_MAX WCHAR_MAX
WCHAR_MIN WCONTINUED WEXITED WEXITSTATUS WIFCONTINUED WIFEXITED WIFSIGNALED WIFSTOPPED
WINT_MAX WINT_MIN WNOHANG WNOWAIT WSTOPPED WSTOPSIG WTERMSIG WUNTRACED a64l abort abs acos
acosf acosh acoshf acoshl acosl aligned_alloc alloca arc4random arc4random_buf
arc4random_uniform asin asinf asinh asinhf asinhl asinl at_quick_exit atan atan2 atan2f
atan2l atanf atanh atanhf atanhl atanl atexit atof atoi atol atoll bcmp bcopy be16toh
be32toh be64toh bsearch bzero cabs cabsf cabsl cacos cacosf cacosh cacoshf cacoshl cacosl
calloc carg cargf cargl casin casinf casinh casinhf casinhl casinl catan catanf catanh
catanhf catanhl catanl cbrt cbrtf cbrtl ccos ccosf ccosh ccoshf ccoshl ccosl ceil ceilf
ceill cexp cexpf cexpl cimag cimagf cimagl clearenv clog clogf clogl conj conjf conjl
copysign copysignf copysignl cos cosf cosh coshf coshl cosl cpow cpowf cpowl cproj cprojf
cprojl creal crealf creall csin csinf csinh csinhf csinhl csinl csqrt csqrtf csqrtl ctan
ctanf ctanh ctanhf ctanhl ctanl div drand48 drand48_data drand48_r drem dremf dreml ecvt
ecvt_r erand48 erand48_r erf erfc erfcf erfcl erff erfl exit exp exp2 exp2f exp2l expf expl
explicit_bzero expm1 expm1f expm1l fabs fabsf fabsl fcvt fcvt_r fd_mask fd_set fdim fdimf
fdiml feclearexcept fegetenv fegetexceptflag fegetround feholdexcept feraiseexcept fesetenv
fesetexceptflag fesetround fetestexcept feupdateenv ffs ffsl ffsll finite finitef finitel
floor floorf floorl fma fmaf fmal fmax fmaxf fmaxl fmin fminf fminl fmod fmodf fmodl
fpclassify fprintf fputc fputs free frexp frexpf frexpl fscanf fwrite gamma gammaf gammal
gcvt getenv getloadavg getsubopt htobe16 htobe32 htobe64 htole16 htole32 htole64 hypot
hypotf hypotl ilogb ilogbf ilogbl imaxabs index initstate initstate_r isalnum isalpha
isblank iscntrl isdigit isfinite isgraph isgreater isgreaterequal isinf isinff isinfl isless
islessequal islessgreater islower isnan isnanf isnanl isnormal isprint ispunct isspace
isunordered isupper iswalnum iswalpha iswblank iswcntrl iswdigit iswgraph iswlower iswprint
iswpunct iswspace iswupper iswxdigit isxdigit j0 j0f j0l j1 j1f j1l jn jnf jnl jrand48
jrand48_r l64a labs lcong48 lcong48_r ldexp ldexpf ldexpl ldiv le16toh le32toh le64toh
lgamma lgamma_r lgammaf lgammaf_r lgammal lgammal_r linux llabs lldiv llrint llrintf llrintl
llround llroundf llroundl log log10 log10f log10l log1p log1pf log1pl log2 log2f log2l logb
logbf logbl logf logl lrand48 lrand48_r lrint lrintf lrintl lround lroundf lroundl madvise
malloc math_errhandling mblen mbstowcs mbtowc memccpy memchr memcmp memcpy memmove memset
mincore mkdtemp mkstemp mkstemps mktemp mlock mlockall mmap modf modff modfl mprotect
mrand48 mrand48_r msync munlock munlockall munmap nan nanf nanl nearbyint nearbyintf
nearbyintl nextafter nextafterf nextafterl nexttoward nexttowardf nexttowardl nrand48
nrand48_r on_exit posix_madvise posix_memalign pow powf powl printf pselect putc putchar
putenv puts qecvt qecvt_r qfcvt qfcvt_r qgcvt qsort quick_exit rand rand_r random
random_data random_r realloc reallocarray realpath remainder remainderf remainderl remquo
remquof remquol rindex rint rintf rintl round roundf roundl rpmatch scalb scalbf scalbl
scalbln scalblnf scalblnl scalbn scalbnf scalbnl scanf seed48 seed48_r select setenv
setstate setstate_r shm_open shm_unlink signbit signgam significand significandf
significandl sin sinf sinh sinhf sinhl sinl snprintf sprintf sqrt sqrtf sqrtl srand srand48
srand48_r srandom srandom_r sscanf std stpcpy stpncpy strcasecmp strcasecmp_l strcat strchr
strcmp strcoll strcoll_l strcpy strcspn strdup strerror strerror_l strerror_r strftime
strlen strncasecmp strncasecmp_l strncat strncmp strncpy strndup strnlen strpbrk strrchr
strsep strsignal strspn strstr strtod strtof strtok strtok_r strtol strtold strtoll strtoq
strtoul strtoull strtouq strxfrm strxfrm_l system tan tanf tanh tanhf tanhl tanl tgamma
tgammaf tgammal timespec timeval tolower toupper towlower towupper trunc truncf truncl
u_char u_int u_long u_short uint ulong unix unsetenv ushort valloc vfprintf vfscanf vprintf
vscanf vsnprintf vsprintf vsscanf wcstombs wctomb y0 y0f y0l y1 y1f y1l yn ynf ynl
""".split())

# complex.h, which a complex kernel's source includes (C99; glibc's GNU clog10
# among them). `I` and `complex` are removed again after it, but refused too.
COMPLEX_NAMES = frozenset("""
CMPLX CMPLXF CMPLXL I cabs cabsf cabsl cacos cacosf cacosh cacoshf cacoshl cacosl carg cargf
cargl casin casinf casinh casinhf casinhl casinl catan catanf catanh catanhf catanhl catanl
ccos ccosf ccosh ccoshf ccoshl ccosl cexp cexpf cexpl cimag cimagf cimagl clog clog10
clog10f clog10l clogf clogl complex conj conjf conjl cpow cpowf cpowl cproj cprojf cprojl
creal crealf creall csin csinf csinh csinhf csinhl csinl csqrt csqrtf csqrtl ctan ctanf
ctanh ctanhf ctanhl ctanl imaginary
""".split())


def refusal(name: str) -> str | None:
    """Why `name` cannot name an exported kernel, or None when it can."""
    if not name.isidentifier() or not name.isascii():
        return "is not a C identifier"
    if name.lower().startswith("ep_"):
        return "starts with ep_, which names the generated files' own helpers"
    if name.startswith("_") or "__" in name:
        return "is reserved to the implementation (a leading underscore, or __)"
    if name.endswith("_t"):
        return "ends in _t, which POSIX reserves for the headers' types"
    if name in C_KEYWORDS or name in CXX_KEYWORDS:
        return "is a keyword of C or C++"
    if name == "main" or name.startswith("omp_"):
        return "is a name the C runtime or OpenMP uses"
    declared = [n for n in (name, *(f"{name}_{s}" for s in _DERIVED))
                if n in HEADER_NAMES or n in COMPLEX_NAMES]
    if declared:
        return f"collides with {declared[0]}, declared by the headers the files include"
    return None


_DERIVED = ("free", "idx_t", "val_t", "restrict", "H")


def check_export_name(name) -> str:
    """`name`, if it can name an exported kernel; else an EtchpyError naming it."""
    why = refusal(name) if isinstance(name, str) else "is not a string"
    if why:
        raise EtchpyError(f"export name {name!r} {why}; choose another name")
    return name
