"""A native build's disk key names the CPU it targets (runtime.host_cpu): a cache
directory shared by hosts of other CPUs never hands one the other's code."""
from etchpy.runtime import cache, host_cpu
from etchpy.runtime.compiler import Compiler

CC = Compiler(("/usr/bin/cc",), "cc (test) 1.0")
NATIVE = ("-O3", "-march=native")

ZEN = """processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 17
model name\t: AMD EPYC 9R14
stepping\t: 1
flags\t\t: fpu sse2 avx2 avx512f

processor\t: 1
vendor_id\t: GenuineIntel
"""


def test_a_native_build_is_keyed_by_its_cpu():
    zen, intel = "vendor_id: AuthenticAMD\nflags: avx512f", "vendor_id: GenuineIntel\nflags: avx2"
    a = cache.kernel_key("int f;", "", CC, NATIVE, False, cpu=zen)
    assert a != cache.kernel_key("int f;", "", CC, NATIVE, False, cpu=intel)
    assert a == cache.kernel_key("int f;", "", CC, NATIVE, False, cpu=zen)


def test_a_portable_build_is_not():
    assert host_cpu.isa_key(("-O3",)) == ""
    assert host_cpu.isa_key(("-O3", "-mcpu=native")) == host_cpu.cpu_identity()
    assert (cache.kernel_key("int f;", "", CC, ("-O3",), False)
            == cache.kernel_key("int f;", "", CC, ("-O3",), False, cpu=""))


def test_the_identity_is_the_first_processors_features():
    text = host_cpu.identity_of(ZEN.splitlines(keepends=True))
    assert text == ("vendor_id: AuthenticAMD\ncpu family: 25\nmodel: 17\nstepping: 1\n"
                    "flags: fpu sse2 avx2 avx512f")
    assert "GenuineIntel" not in text and "model name" not in text
    assert host_cpu.identity_of([]) == ""


def test_this_hosts_key_uses_its_identity():
    me = host_cpu.cpu_identity()
    assert (cache.kernel_key("int g;", "", CC, NATIVE, False)
            == cache.kernel_key("int g;", "", CC, NATIVE, False, cpu=me))
