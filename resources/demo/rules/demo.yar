/* Demo YARA rules: the analysts' own format. Text, hex and regex strings, conditions on counts, offsets,
   header bytes and other rules. Run `hitscope-cli scan -s -r resources/demo/rules/demo.yar resources/demo/files`
   next to `yara -s -r resources/demo/rules/demo.yar resources/demo/files`: the lines are the same. */

import "pe"
import "math"

private rule mz_header
{
    condition:
        uint16(0) == 0x5A4D
}

rule pe_dos_stub : pe
{
    meta:
        description = "An MZ header with the DOS stub message"
        score = 20
    strings:
        $mz = { 4D 5A ?? 00 }
        $stub = "This program cannot be run in DOS mode" ascii wide
    condition:
        mz_header and $mz at 0 and $stub in (0..256)
}

rule run_key_persistence : persistence windows
{
    meta:
        score = 80
    strings:
        $run = "CurrentVersion\\Run" nocase
        $exe = /[A-Za-z]:\\Users\\Public\\[a-z0-9_]{3,16}\.exe/ nocase
        $mutex = /Global\\Mtx_[0-9a-f]{12}/
    condition:
        $run and ($exe or $mutex)
}

rule download_and_run : dropper
{
    meta:
        severity = "high"
    strings:
        $curl = /curl [-a-zA-Z]* ?https?:\/\/[^ |]+ ?\| ?(ba)?sh/
        $wget = /wget -qO- https?:\/\/[^ |]+ ?\| ?(ba)?sh/
        $ip = /\b185\.220\.101\.[0-9]{1,3}\b/
    condition:
        any of ($curl, $wget) or #ip > 1
}

rule old_msie_user_agent : network
{
    meta:
        score = 40
    strings:
        $ua = "MSIE 6.0" fullword
    condition:
        #ua >= 1 and filesize < 1MB
}

rule dll_exporting_func : pe
{
    meta:
        description = "A 64-bit DLL that exports Func and resolves its imports at run time (the pe module)"
        score = 60
    condition:
        pe.is_dll() and pe.machine == pe.MACHINE_AMD64 and pe.exports("Func")
        and pe.imports(/kernel32\.dll/i, /^GetProcAddress$/)
}

rule flat_code_section : pe
{
    meta:
        description = "A code section of low entropy (the pe and math modules)"
    condition:
        for any s in pe.sections : (s.name == ".text" and math.entropy(s.raw_data_offset, s.raw_data_size) < 2.0)
}
