// SPDX-License-Identifier: GPL-3.0-or-later
// YARA modules in rule conditions (pe, elf, dotnet, math, hash, time, console, magic, macho, dex), against the yara
// binary (the oracle) on real files: for every rule file below, `hitscope-cli scan -s RULES FILE...` must print the
// RULE PATH and -s lines that `yara -s RULES FILE` prints file by file, and `-c` the same counts. The files are the
// PE, .NET and ELF binaries packaging/setup.sh installs and broken or foreign ones written here (text, empty, a PE
// cut at 300 and 4096 bytes, e_lfanew past the end, a bare "MZ", a Mach-O header, a DEX header), so that module
// values are defined on some files, undefined on others, and each rule matches some files and misses others. Rules
// yara refuses for module reasons are refused alone, the rest of their file running.
#include <QCryptographicHash>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <QtEndian>

#include <iterator>
#include <map>
#include <vector>

#include "testutil.h"
#include "testutilyara.h"

using namespace TestUtil;

namespace {

/// Files from Debian packages that packaging/setup.sh installs: PE32+ EFI applications (shim-unsigned), a .NET
/// assembly (libmono-corlib4.5-dll), an ELF executable (yara), an ELF shared object (libyara9) and an ELF
/// relocatable object with a symbol table (libc6-dev, through build-essential; the others are stripped).
const QStringList kInstalled = {
    QStringLiteral("/usr/lib/shim/shimx64.efi"),
    QStringLiteral("/usr/lib/shim/mmx64.efi"),
    QStringLiteral("/usr/lib/shim/fbx64.efi"),
    QStringLiteral("/usr/lib/mono/4.5/mscorlib.dll"),
    QStringLiteral("/usr/bin/yara"),
    QStringLiteral("/usr/lib/x86_64-linux-gnu/libyara.so.9"),
    QStringLiteral("/usr/lib/x86_64-linux-gnu/crt1.o"),
};

struct ModuleRules
{
    const char *row; ///< what the file covers, the row's name
    QByteArray text; ///< a whole rule file; @NAME@ stands for a value initTestCase computes from the samples
};

// Rule names say what each rule expects: `never_` rules match no sample in yara (undefined values, absent data),
// `always_` rules match every sample; every other rule matches some samples and misses others.
std::vector<ModuleRules> moduleRules()
{
    return {
        { "pe scalar fields and constants", R"yar(
import "pe"

rule is_pe_file { condition: pe.is_pe }
rule not_is_pe { condition: not pe.is_pe }
rule amd64 { condition: pe.machine == pe.MACHINE_AMD64 }
rule i386 { condition: pe.machine == pe.MACHINE_I386 and pe.machine != 34404 }
rule ten_sections { condition: pe.number_of_sections == 10 }
rule few_sections { condition: pe.number_of_sections > 2 and pe.number_of_sections < 8 }
rule entry_point_value { condition: pe.entry_point == 135168 or pe.entry_point == 0x5000 }
rule entry_point_raw_differs { condition: pe.entry_point_raw - pe.entry_point == 16384 }
// The PE cut at 4096 bytes: its entry point lies past the end, and yara says -1.
rule entry_point_negative { condition: pe.entry_point < 0 }
rule zero_timestamp { condition: pe.timestamp == 0 }
rule dll_flag { condition: pe.characteristics & pe.DLL }
rule exe_not_dll { condition: pe.characteristics & pe.EXECUTABLE_IMAGE != 0 and pe.characteristics & pe.DLL == 0 }
rule efi_application { condition: pe.subsystem == pe.SUBSYSTEM_EFI_APPLICATION }
rule console_subsystem { condition: pe.subsystem == pe.SUBSYSTEM_WINDOWS_CUI }
rule image_base_high { condition: pe.image_base == 0x400000 }
rule image_base_zero { condition: pe.image_base == 0 }
rule linker_2_40 { condition: pe.linker_version.major == 2 and pe.linker_version.minor == 40 }
rule linker_8 { condition: pe.linker_version.major == 8 and pe.linker_version.minor == 0 }
rule os_version_4 { condition: pe.os_version.major == 4 and pe.subsystem_version.major == 4 }
rule image_size_large { condition: pe.size_of_image > 900KB }
rule image_size_exact { condition: pe.size_of_image == 106496 }
rule headers_page { condition: pe.size_of_headers == 4096 and pe.file_alignment == pe.section_alignment }
rule optional_header_64 { condition: pe.opthdr_magic == pe.IMAGE_NT_OPTIONAL_HDR64_MAGIC }
rule optional_header_32 {
    condition: pe.opthdr_magic == pe.IMAGE_NT_OPTIONAL_HDR32_MAGIC and pe.size_of_optional_header == 224
}
rule nx_dynamic_base {
    condition: pe.dll_characteristics & (pe.NX_COMPAT | pe.DYNAMIC_BASE) == pe.NX_COMPAT | pe.DYNAMIC_BASE
}
rule header_checksum { condition: pe.checksum == 134391 or pe.checksum == 939894 }
rule base_of_data_defined { condition: defined pe.base_of_data }
rule code_sizes { condition: pe.size_of_code + pe.size_of_initialized_data > 1MB }
rule symbols_pointer { condition: pe.pointer_to_symbol_table > 0 and pe.number_of_symbols > 3000 }
rule rva_and_sizes { condition: pe.number_of_rva_and_sizes == 16 and pe.base_of_code == 8192 }
rule overlay_present { condition: pe.overlay.size > 0 and pe.overlay.offset + pe.overlay.size == filesize }
rule overlay_none { condition: pe.overlay.size == 0 and pe.overlay.offset == 0 }
rule stack_reserve { condition: pe.size_of_stack_reserve == 1MB and pe.size_of_heap_commit == 4KB }
rule imports_counts { condition: pe.number_of_imports == 1 and pe.number_of_imported_functions == 1 }
rule no_imports {
    condition: pe.number_of_imports == 0 and pe.number_of_exports == 0 and pe.number_of_delayed_imports == 0
}
rule win32_version_zero { condition: pe.win32_version_value == 0 and pe.loader_flags == 0 }
)yar" },
        { "pe sections, data directories and loops", R"yar(
import "pe"

rule first_section_text { condition: pe.sections[0].name == ".text" }
rule second_section_text { condition: pe.sections[1].name == ".text" and pe.sections[1].virtual_size > 0 }
// GNU ld names long sections "/4" and keeps the real name in the COFF string table, past the cut of pe4096.bin.
rule long_section_name { condition: pe.sections[0].name == "/4" and pe.sections[0].full_name == ".eh_frame" }
rule long_name_unresolved { condition: pe.sections[0].name == "/4" and not defined pe.sections[0].full_name }
rule last_section_sbat { condition: pe.sections[pe.number_of_sections - 1].name == ".sbat" }
rule section_raw_offset {
    condition: pe.sections[0].raw_data_offset == 512 and pe.sections[0].raw_data_size > 4MB
}
rule section_index_expression { condition: pe.sections[(2 * 3) - 4].name == ".reloc" }
rule loop_index_text {
    condition: for any i in (0 .. pe.number_of_sections - 1) : (pe.sections[i].name == ".text")
}
rule loop_index_all_aligned {
    condition: pe.number_of_sections > 0 and
        for all i in (0 .. pe.number_of_sections - 1) : (pe.sections[i].raw_data_offset % pe.file_alignment == 0)
}
rule loop_index_two_writable {
    condition: for 2 i in (0 .. pe.number_of_sections - 1) : (pe.sections[i].characteristics & pe.SECTION_MEM_WRITE)
}
// yara 4.2.3's "for none" is "for 0": true whenever the loop runs at all, even where mscorlib.dll has a .rsrc.
rule loop_index_none_rsrc {
    condition: for none i in (0 .. pe.number_of_sections - 1) : (pe.sections[i].name == ".rsrc")
}
rule loop_index_past_end {
    condition: for any i in (0 .. pe.number_of_sections) : (not defined pe.sections[i].name)
}
rule iterate_text { condition: for any s in pe.sections : (s.name == ".text") }
rule iterate_rsrc { condition: for any s in pe.sections : (s.name == ".rsrc" and s.virtual_size < s.raw_data_size) }
rule iterate_all_readable { condition: for all s in pe.sections : (s.characteristics & pe.SECTION_MEM_READ) }
rule iterate_all_short_names { condition: for all s in pe.sections : (s.name matches /^[.\/][a-z0-9_]{1,7}$/) }
rule iterate_one_executable { condition: for 1 s in pe.sections : (s.characteristics & pe.SECTION_MEM_EXECUTE) }
rule iterate_none_huge { condition: for none s in pe.sections : (s.virtual_size > 1MB) }
rule iterate_nested {
    condition: for any s in pe.sections : (for any t in pe.sections : (s.name == ".text" and t.name == ".data" and
        t.virtual_address > s.virtual_address))
}
rule iterate_full_names { condition: for any s in pe.sections : (s.full_name == ".vendor_cert") }
rule section_index_by_address { condition: pe.section_index(pe.entry_point_raw) == pe.section_index(".text") }
rule data_directory_import {
    condition: pe.data_directories[pe.IMAGE_DIRECTORY_ENTRY_IMPORT].virtual_address != 0
}
rule data_directory_reloc_size { condition: pe.data_directories[pe.IMAGE_DIRECTORY_ENTRY_BASERELOC].size == 10 }
rule data_directory_clr { condition: pe.data_directories[pe.IMAGE_DIRECTORY_ENTRY_COM_DESCRIPTOR].size == 72 }
rule never_data_directory_size_without_address {
    condition: for any d in pe.data_directories : (d.size > 0 and d.virtual_address == 0)
}
)yar" },
        { "pe functions", R"yar(
import "pe"

rule imports_dll_function { condition: pe.imports("mscoree.dll", "_CorDllMain") }
// yara 4.2.3 compares both the library and the function name without case.
rule imports_ignores_case { condition: pe.imports("MSCOREE.DLL", "_cordllmain") }
rule imports_wrong_function { condition: pe.is_pe and not pe.imports("mscoree.dll", "_CorExeMain") }
rule imports_dll_only { condition: pe.imports("mscoree.dll") == 1 }
rule imports_dll_only_missing { condition: pe.imports("kernel32.dll") == 0 }
rule imports_regexes { condition: pe.imports(/^MSCOREE\.dll$/i, /^_Cor/) }
rule imports_regex_count { condition: pe.imports(/./, /./) == pe.number_of_imported_functions }
rule never_imports_regex_miss { condition: pe.imports(/kernel32/i, /^Get/) }
rule imports_standard_flag { condition: pe.imports(pe.IMPORT_STANDARD, "mscoree.dll", "_CorDllMain") }
rule imports_any_flag_regex { condition: pe.imports(pe.IMPORT_ANY, /mscoree/, /DllMain$/) }
rule imports_standard_dll_only { condition: pe.imports(pe.IMPORT_STANDARD, "mscoree.dll") > 0 }
rule never_imports_delayed_flag { condition: pe.imports(pe.IMPORT_DELAYED, "mscoree.dll", "_CorDllMain") }
rule never_imports_ordinal { condition: pe.imports("mscoree.dll", 1) }
rule never_exports_name { condition: pe.exports("DllMain") }
rule never_exports_regex { condition: pe.exports(/^efi_main$/) }
rule never_exports_ordinal { condition: pe.exports(1) }
rule exports_absent { condition: pe.is_pe and not pe.exports("efi_main") and pe.number_of_exports == 0 }
rule never_exports_index { condition: defined pe.exports_index("efi_main") }
// is_dll() returns the characteristics masked with DLL (8192), not 1.
rule dll_function { condition: pe.is_dll() }
rule dll_function_is_flag { condition: pe.is_dll() == pe.DLL }
rule never_dll_function_is_one { condition: pe.is_dll() == 1 }
rule not_dll { condition: not pe.is_dll() }
rule bits_32 { condition: pe.is_32bit() and not pe.is_64bit() }
rule bits_64 { condition: pe.is_64bit() == 1 and pe.is_32bit() == 0 }
rule imphash_of_mscorlib { condition: pe.imphash() == "dae02f32a21e03ce65412f6e56942daa" }
rule imphash_without_imports { condition: pe.imphash() == "d41d8cd98f00b204e9800998ecf8427e" }
rule never_imphash_uppercase { condition: pe.imphash() == "DAE02F32A21E03CE65412F6E56942DAA" }
rule rva_to_offset_entry { condition: pe.rva_to_offset(pe.entry_point_raw) == pe.entry_point }
rule rva_to_offset_header { condition: pe.rva_to_offset(0) == 0 }
rule rva_to_offset_past_image { condition: pe.is_pe and not defined pe.rva_to_offset(0x7fffffff) }
rule checksum_matches_header { condition: pe.calculate_checksum() == pe.checksum }
rule checksum_differs { condition: pe.calculate_checksum() != pe.checksum }
rule section_index_text { condition: pe.section_index(".text") == 1 }
rule section_index_first { condition: pe.section_index(".text") == 0 and pe.section_index(".reloc") == 2 }
rule section_index_missing { condition: pe.is_pe and not defined pe.section_index(".nope") }
// section_index(integer) takes a file offset in yara 4.2.3, not an RVA.
rule section_index_file_offset { condition: pe.section_index(pe.sections[2].raw_data_offset + 4) == 2 }
rule section_index_not_rva { condition: pe.section_index(pe.sections[2].virtual_address + 4) == 5 }
rule section_index_unmapped { condition: pe.is_pe and not defined pe.section_index(0) }
rule language_neutral { condition: pe.language(0) and pe.locale(0) }
rule never_language_english { condition: pe.language(9) or pe.locale(0x409) }
rule never_rich_signature_version { condition: pe.rich_signature.version(0x5a) or pe.rich_signature.toolid(1) }
rule rich_signature_absent { condition: pe.is_pe and not defined pe.rich_signature.toolid(1, 1) }
)yar" },
        { "pe version info, resources and absent data", R"yar(
import "pe"

rule version_company { condition: pe.version_info["CompanyName"] == "Mono development team" }
rule version_product_contains { condition: pe.version_info["ProductName"] contains "Language Infrastructure" }
rule version_missing_key { condition: pe.is_pe and not defined pe.version_info["NoSuchKey"] }
rule version_key_is_case_sensitive { condition: pe.is_pe and not defined pe.version_info["companyname"] }
rule version_pairs_any {
    condition: for any k, v in pe.version_info : (k == "FileVersion" and v startswith "4.6")
}
rule version_pairs_all {
    condition: for all k, v in pe.version_info : (k matches /^[A-Z][A-Za-z]+$/ and v != "")
}
// Three values are "mscorlib.dll": "for 2" means at least two.
rule version_pairs_count { condition: for 2 k, v in pe.version_info : (v == "mscorlib.dll") }
rule never_version_pairs_value { condition: for any k, v in pe.version_info : (v == "Microsoft Corporation") }
rule version_list {
    condition: pe.number_of_version_infos == 10 and pe.version_info_list[1].key == "CompanyName"
}
rule version_list_loop {
    condition: for any i in (0 .. pe.number_of_version_infos - 1) : (pe.version_info_list[i].value == "4.6.57.0")
}
rule version_list_iterate {
    condition: for any e in pe.version_info_list : (e.key == "LegalTrademarks" and e.value == " ")
}
rule version_list_empty { condition: pe.is_pe and pe.number_of_version_infos == 0 }
rule resource_count {
    condition: pe.number_of_resources == 1 and pe.resources[0].type == pe.RESOURCE_TYPE_VERSION
}
rule resource_fields {
    condition: pe.resources[0].id == 1 and pe.resources[0].language == 0 and pe.resources[0].length == 880
}
rule resource_offset_in_rsrc {
    condition: for any r in pe.resources : (r.offset >= pe.sections[1].raw_data_offset and
        r.offset + r.length <= pe.sections[1].raw_data_offset + pe.sections[1].raw_data_size)
}
rule resource_strings_undefined {
    condition: pe.number_of_resources == 1 and not defined pe.resources[0].type_string
}
rule resource_loop_index {
    condition: for any i in (0 .. pe.number_of_resources - 1) : (pe.resources[i].type == 16 and
        pe.resources[i].rva > 0)
}
rule resource_version_zero { condition: pe.resource_version.major == 0 and pe.resource_timestamp == 0 }
rule resources_none {
    condition: pe.is_pe and pe.number_of_resources == 0 and not defined pe.resource_timestamp
}
rule never_resource_out_of_range { condition: defined pe.resources[1].type }
rule signatures_none { condition: pe.number_of_signatures == 0 and not defined pe.signatures[0].issuer }
rule never_signature_loop { condition: for any s in pe.signatures : (s.issuer contains "Microsoft") }
rule never_rich_fields {
    condition: pe.rich_signature.key != 0 or pe.rich_signature.offset > 0 or defined pe.rich_signature.clear_data
}
rule rich_absent_on_pe { condition: pe.is_pe and not defined pe.rich_signature.length }
rule never_pdb_path { condition: defined pe.pdb_path or defined pe.dll_name or defined pe.export_timestamp }
rule import_details {
    condition: pe.import_details[0].library_name == "mscoree.dll" and
        pe.import_details[0].functions[0].name == "_CorDllMain"
}
rule import_details_loop {
    condition: for any d in pe.import_details : (d.number_of_functions == 1 and
        for any f in d.functions : (f.name endswith "DllMain" and not defined f.ordinal))
}
rule never_export_details { condition: for any e in pe.export_details : (e.name == "efi_main") }
rule never_delay_import_details { condition: defined pe.delay_import_details[0].library_name }
)yar" },
        { "pe values undefined, out of range, on other files", R"yar(
import "pe"

rule entry_point_defined { condition: defined pe.entry_point }
rule entry_point_undefined { condition: not defined pe.entry_point }
rule not_pe { condition: not pe.is_pe }
rule never_undefined_equal { condition: pe.machine == 0 }
// A comparison with an undefined value is undefined, and so is its negation: neither matches.
rule not_of_undefined_is_false { condition: not (pe.machine == pe.MACHINE_AMD64) }
rule undefined_not_equal_is_false { condition: pe.machine != pe.MACHINE_I386 }
rule undefined_or_true { condition: pe.machine == pe.MACHINE_AMD64 or filesize < 100 }
// yara 4.2.3's "and" and "or" turn an undefined operand into false: their result is always defined.
rule always_and_of_undefined_is_false { condition: not (pe.number_of_sections > 0 and filesize < 100) }
rule undefined_and_false { condition: not (pe.number_of_sections > 0 and filesize > 1000) }
rule always_and_is_defined { condition: defined (pe.machine == 34404 and filesize > 1000) }
rule always_or_is_defined { condition: defined (pe.machine == 1 or filesize > 1000) }
rule undefined_arithmetic { condition: not defined (pe.number_of_sections * 2 + 1) }
rule undefined_integer_as_boolean { condition: pe.number_of_sections }
rule never_undefined_string_compare { condition: pe.sections[0].name != "x" and not pe.is_pe }
rule undefined_string_operator { condition: not defined (pe.sections[0].name contains "t") }
rule never_undefined_regex { condition: pe.sections[0].name matches /./ and not pe.is_pe }
rule never_index_out_of_range { condition: pe.sections[100].name == ".text" }
rule never_index_out_of_range_negated { condition: not (pe.sections[100].name == ".text") }
rule never_negative_index { condition: defined pe.sections[-1].name }
rule never_data_directory_past_end { condition: defined pe.data_directories[16].size }
rule always_index_past_end_undefined { condition: not defined pe.sections[pe.number_of_sections].name }
rule undefined_index_expression { condition: not defined pe.sections[pe.number_of_sections - 1].name }
rule never_function_on_non_pe { condition: not pe.is_pe and (defined pe.is_dll() or defined pe.imphash()) }
rule function_undefined_on_non_pe {
    condition: not defined pe.calculate_checksum() and not defined pe.section_index(".text")
}
rule never_imports_on_non_pe { condition: not pe.is_pe and pe.imports("kernel32.dll", "GetProcAddress") }
rule imports_undefined_negated { condition: not pe.imports("kernel32.dll", "GetProcAddress") }
// yara 4.2.3: "for none" is true once the loop runs; over no item at all, every quantifier is false.
rule for_none_is_for_zero { condition: for none s in pe.sections : (s.name == ".text") }
rule for_none_on_empty_array { condition: not (for none s in pe.sections : (true)) }
rule for_all_on_empty_array { condition: not (for all s in pe.sections : (true)) }
rule always_loop_body_undefined_or_true {
    condition: for any i in (0 .. 1) : (pe.sections[i + 1000].virtual_size == 0 or i == 1)
}
rule truncated_entry_point { condition: pe.is_pe and pe.entry_point == -1 }
)yar" },
        { "elf sections, segments, symbols and dynamic entries", R"yar(
import "elf"

rule shared_object { condition: elf.type == elf.ET_DYN }
rule relocatable { condition: elf.type == elf.ET_REL and elf.machine == elf.EM_X86_64 }
rule not_elf { condition: not defined elf.type }
rule x86_64 { condition: elf.machine == elf.EM_X86_64 }
rule entry_point_value { condition: elf.entry_point == 16624 }
rule entry_point_in_text {
    condition: for any s in elf.sections : (s.name == ".text" and elf.entry_point >= s.address and
        elf.entry_point < s.address + s.size)
}
// libyara.so.9's entry point is 0, which yara leaves undefined; crt1.o has none.
rule entry_point_absent { condition: defined elf.type and not defined elf.entry_point }
rule section_count { condition: elf.number_of_sections == 30 }
rule section_count_range { condition: elf.number_of_sections > 20 and elf.number_of_sections < 30 }
rule section_header_layout {
    condition: elf.sh_entry_size == 64 and elf.sh_offset + elf.number_of_sections * 64 <= filesize
}
rule first_section_null { condition: elf.sections[0].name == "" and elf.sections[0].type == elf.SHT_NULL }
rule second_section_interp { condition: elf.sections[1].name == ".interp" and elf.sections[1].size == 28 }
rule last_section_shstrtab { condition: elf.sections[elf.number_of_sections - 1].name == ".shstrtab" }
rule section_out_of_range {
    condition: defined elf.number_of_sections and not defined elf.sections[elf.number_of_sections].name
}
rule loop_index_dynsym {
    condition: for any i in (0 .. elf.number_of_sections - 1) : (elf.sections[i].type == elf.SHT_DYNSYM and
        elf.sections[i].name == ".dynsym")
}
rule iterate_bss { condition: for any s in elf.sections : (s.name == ".bss" and s.type == elf.SHT_NOBITS) }
rule iterate_executable_flags {
    condition: for 4 s in elf.sections : (s.flags & elf.SHF_EXECINSTR and s.flags & elf.SHF_ALLOC)
}
rule iterate_all_named { condition: for all s in elf.sections : (s.name == "" or s.name startswith ".") }
rule iterate_debugaltlink { condition: for any s in elf.sections : (s.name == ".gnu_debugaltlink") }
rule segment_count {
    condition: elf.number_of_segments == 13 and elf.ph_entry_size == 56 and elf.ph_offset == 64
}
rule segment_first_phdr { condition: elf.segments[0].type == elf.PT_PHDR and elf.segments[0].flags == elf.PF_R }
rule segment_interp {
    condition: for any g in elf.segments : (g.type == elf.PT_INTERP and g.file_size == 28 and g.offset == 792)
}
rule segment_executable_load {
    condition: for 1 i in (0 .. elf.number_of_segments - 1) : (elf.segments[i].type == elf.PT_LOAD and
        elf.segments[i].flags == elf.PF_R | elf.PF_X)
}
rule segment_gnu_stack {
    condition: for any g in elf.segments : (g.type == elf.PT_GNU_STACK and g.flags & elf.PF_W and
        not g.flags & elf.PF_X)
}
rule segments_none { condition: elf.number_of_segments == 0 }
rule dynsym_count { condition: elf.dynsym_entries > 200 }
rule dynsym_imports_yr {
    condition: for any y in elf.dynsym : (y.name == "yr_scanner_scan_fd" and y.shndx == 0)
}
rule dynsym_exports_yr {
    condition: for any y in elf.dynsym : (y.name == "yr_scanner_scan_fd" and y.shndx != 0 and
        y.type == elf.STT_FUNC and y.bind == elf.STB_GLOBAL and y.value > 0)
}
rule dynsym_loop_index {
    condition: for any i in (0 .. elf.dynsym_entries - 1) : (elf.dynsym[i].name == "__libc_start_main")
}
rule dynsym_first_empty { condition: elf.dynsym[0].name == "" and elf.dynsym[0].value == 0 }
rule symtab_start {
    condition: for any y in elf.symtab : (y.name == "_start" and y.type == elf.STT_FUNC and y.size == 34)
}
rule symtab_weak { condition: for any y in elf.symtab : (y.bind == elf.STB_WEAK and y.name == "data_start") }
rule symtab_stripped { condition: defined elf.type and not defined elf.symtab_entries }
rule symtab_index { condition: elf.symtab_entries == 11 and elf.symtab[4].name == "_start" }
rule dynamic_needed_count { condition: for 4 d in elf.dynamic : (d.type == elf.DT_NEEDED) }
rule dynamic_init { condition: for any d in elf.dynamic : (d.type == elf.DT_INIT and d.val == 12288) }
rule dynamic_entries { condition: elf.dynamic_section_entries == 29 and elf.dynamic[6].type == elf.DT_INIT }
rule dynamic_last_null { condition: elf.dynamic[elf.dynamic_section_entries - 1].type == elf.DT_NULL }
rule never_dynamic_past_end { condition: defined elf.dynamic[elf.dynamic_section_entries].type }
)yar" },
        { "dotnet streams, guids and user strings", R"yar(
import "dotnet"

rule is_dotnet_assembly { condition: dotnet.is_dotnet }
// 0 on a PE that is not .NET, undefined on what is not a PE at all.
rule is_dotnet_zero { condition: dotnet.is_dotnet == 0 }
rule is_dotnet_undefined { condition: not defined dotnet.is_dotnet }
rule runtime_version { condition: dotnet.version == "v4.0.30319" }
rule runtime_version_prefix {
    condition: dotnet.version startswith "v4." and dotnet.version matches /^v\d+\.\d+\.\d+$/
}
rule module_name { condition: dotnet.module_name == "mscorlib.dll" }
rule module_name_nocase { condition: dotnet.module_name iequals "MSCORLIB.DLL" }
// yara 4.2.3 reads no assembly table from mscorlib.dll.
rule assembly_name_undefined { condition: dotnet.is_dotnet and not defined dotnet.assembly.name }
rule never_assembly_version { condition: dotnet.assembly.version.major == 4 or defined dotnet.assembly.culture }
rule stream_count { condition: dotnet.number_of_streams == 5 }
rule stream_names { condition: dotnet.streams[0].name == "#~" and dotnet.streams[4].name == "#Blob" }
rule stream_loop_us {
    condition: for any i in (0 .. dotnet.number_of_streams - 1) : (dotnet.streams[i].name == "#US" and
        dotnet.streams[i].size > 256KB)
}
rule stream_iterate_all {
    condition: for all s in dotnet.streams : (s.name startswith "#" and s.offset + s.size <= filesize)
}
rule stream_iterate_guid { condition: for any s in dotnet.streams : (s.name == "#GUID" and s.size == 16) }
rule guid_value {
    condition: dotnet.number_of_guids == 1 and dotnet.guids[0] == "12b418a7-818c-4ca0-893f-eeaaf67f1e7f"
}
rule guid_iterate {
    condition: for any g in dotnet.guids : (g matches /^[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$/)
}
rule never_guid_past_end { condition: defined dotnet.guids[1] }
rule resources_undefined { condition: dotnet.is_dotnet and not defined dotnet.number_of_resources }
rule never_resources_loop { condition: for any r in dotnet.resources : (r.length > 0) }
rule user_string_count { condition: dotnet.number_of_user_strings > 5000 }
// User strings are UTF-16LE bytes.
rule user_string_index { condition: dotnet.user_strings[10] == "v\x00a\x00l\x00u\x00e\x00" }
rule user_string_loop {
    condition: for any s in dotnet.user_strings : (s == "m\x00s\x00c\x00o\x00r\x00l\x00i\x00b\x00.\x00d\x00l\x00l\x00")
}
rule user_string_loop_index {
    condition: for any i in (0 .. 20) : (dotnet.user_strings[i] contains "i\x00n\x00n\x00e\x00r\x00")
}
rule never_user_string_missing { condition: for any s in dotnet.user_strings : (s == "no such string") }
rule never_typelib {
    condition: defined dotnet.typelib or dotnet.number_of_modulerefs > 0 or defined dotnet.assembly_refs[0].name
}
rule constants_undefined {
    condition: dotnet.is_dotnet and not defined dotnet.number_of_constants and
        not defined dotnet.number_of_field_offsets
}
)yar" },
        { "math on ranges and strings", R"yar(
import "math"

rule entropy_high { condition: math.entropy(0, filesize) > 5.7 }
rule entropy_band { condition: math.entropy(0, filesize) >= 4.0 and math.entropy(0, filesize) < 5.0 }
rule entropy_of_range { condition: math.entropy(0, 64) < 3.0 }
rule entropy_of_string {
    condition: math.entropy("abcd") == 2.0 and math.entropy("aaaa") == 0.0 and filesize > 0
}
// A range running past the end is cut at the end; one starting at the end, or over an empty file, is undefined.
rule entropy_past_end { condition: math.entropy(filesize - 2, 100) == 1.0 }
rule entropy_empty_undefined { condition: not defined math.entropy(0, filesize) }
rule entropy_offset_undefined { condition: filesize > 0 and not defined math.entropy(filesize, 1) }
rule mean_low { condition: math.mean(0, filesize) < 60.0 }
rule mean_of_string { condition: math.mean("ab") == 97.5 and math.mean(0, 2) == 83.5 }
rule deviation_high { condition: math.deviation(0, filesize, math.MEAN_BYTES) > 95.0 }
rule deviation_of_string { condition: math.deviation("ab", 97.0) == 0.5 and filesize > 100 }
rule serial_correlation_high { condition: math.serial_correlation(0, filesize) > 0.5 }
// yara 4.2.3's serial correlation of short inputs: 97.0 for "abab", -100000.0 for "aaaa", 12.846154 for "MZ".
rule serial_correlation_of_string {
    condition: math.serial_correlation("abab") > 90.0 and math.serial_correlation("aaaa") < -1000.0 and filesize < 100
}
rule monte_carlo_low { condition: math.monte_carlo_pi(0, filesize) < 0.1 }
rule monte_carlo_short_undefined { condition: filesize > 0 and not defined math.monte_carlo_pi(0, filesize) }
rule in_range_entropy { condition: math.in_range(math.entropy(0, filesize), 5.6, 5.7) }
rule in_range_bounds {
    condition: math.in_range(1.0, 1.0, 2.0) and math.in_range(2.0, 1.0, 2.0) and filesize == 2
}
rule count_zero_bytes { condition: math.count(0) > 100000 }
rule count_in_range { condition: math.count(0x4d, 0, 1) == 1 and math.count(0x5a, 0, 2) == 1 }
rule count_of_absent_byte { condition: math.count(0) == 0 }
rule percentage_zero_bytes { condition: math.percentage(0) > 0.5 }
rule percentage_in_range { condition: math.percentage(0x4d, 0, 2) == 0.5 }
rule mode_not_zero { condition: math.mode() != 0 }
rule mode_of_range { condition: math.mode(0, 2) == 0x4d and math.mode(1, 1) == 0x5a }
rule min_max { condition: math.min(filesize, 1000) == 1000 and math.max(filesize, 10) == filesize }
rule to_number { condition: math.to_number(filesize > 100) + math.to_number(filesize > 1MB) == 2 }
rule abs_value { condition: math.abs(2 - filesize) > 1MB }
rule float_arithmetic {
    condition: math.entropy(0, filesize) * 2 > 12.0 or math.mean(0, filesize) - 90.0 > 0.0
}
)yar" },
        { "hash on ranges and strings", R"yar(
import "hash"
import "pe"

rule md5_whole_file { condition: hash.md5(0, filesize) == "@MD5_FBX64@" }
rule sha1_whole_file { condition: hash.sha1(0, filesize) == "@SHA1_MSCORLIB@" }
rule sha256_whole_file { condition: hash.sha256(0, filesize) == "@SHA256_YARA@" }
rule crc32_whole_file { condition: hash.crc32(0, filesize) == @CRC32_LIBYARA@ }
rule checksum32_whole_file { condition: hash.checksum32(0, filesize) == @CHECKSUM32_SHIMX64@ }
// The DOS header of the shim files and mscorlib.dll, not of the copy whose e_lfanew was changed.
rule md5_dos_header { condition: hash.md5(0, 64) == "@MD5_SHIMX64_HEAD64@" }
rule sha256_text_section {
    condition: hash.sha256(pe.sections[1].raw_data_offset, pe.sections[1].raw_data_size) ==
        "@SHA256_SHIMX64_SECTION1@"
}
rule md5_mz { condition: hash.md5(0, 2) == "@MD5_MZ@" }
rule md5_elf_magic { condition: hash.md5(0, 4) == "@MD5_ELF_MAGIC@" }
rule crc32_mz { condition: hash.crc32(0, 2) == @CRC32_MZ@ }
rule never_md5_uppercase { condition: hash.md5(0, filesize) == "@MD5_FBX64_UPPER@" }
rule never_md5_wrong { condition: hash.md5(0, filesize) == "00000000000000000000000000000000" }
rule hash_of_strings {
    condition: hash.md5("abc") == "@MD5_ABC@" and hash.sha1("abc") == "@SHA1_ABC@" and
        hash.sha256("abc") == "@SHA256_ABC@" and hash.crc32("abc") == @CRC32_ABC@ and
        hash.checksum32("abc") == 294 and filesize > 1MB
}
rule hash_of_empty_string {
    condition: hash.md5("") == "d41d8cd98f00b204e9800998ecf8427e" and hash.crc32("") == 0 and filesize < 100
}
// yara 4.2.3: an empty range hashes to the empty input's hash, a range past the end is cut at the end, a range
// starting at the end or before the start is undefined, and nothing of an empty file is defined.
rule hash_empty_range { condition: hash.md5(0, 0) == "d41d8cd98f00b204e9800998ecf8427e" and filesize < 4096 }
rule hash_range_clipped { condition: hash.md5(0, filesize + 1) == hash.md5(0, filesize) and filesize < 100 }
rule hash_offset_at_end { condition: filesize > 0 and not defined hash.sha1(filesize, 0) }
rule hash_negative_offset { condition: filesize > 1MB and not defined hash.md5(-1, 2) }
rule hash_empty_file { condition: not defined hash.md5(0, filesize) and not defined hash.crc32(0, 0) }
rule hash_same_ranges { condition: hash.sha1(0, 2) == hash.sha1("MZ") and hash.checksum32(0, 2) == 0x4d + 0x5a }
)yar" },
        { "time, magic, macho and dex", R"yar(
import "time"
import "magic"
import "macho"
import "dex"

// time.now() is never compared with anything that moves: the rows stay deterministic.
rule time_now_after_2020 { condition: time.now() > 1577836800 and filesize > 0 }
rule never_time_now_before_2000 { condition: time.now() < 946684800 }
rule magic_pe_mime { condition: magic.mime_type() == "application/vnd.microsoft.portable-executable" }
rule magic_dos_mime { condition: magic.mime_type() == "application/x-dosexec" }
rule magic_elf_type {
    condition: magic.type() contains "ELF 64-bit LSB" and magic.mime_type() startswith "application/"
}
rule magic_text { condition: magic.mime_type() == "text/plain" and magic.type() startswith "ASCII text" }
rule magic_dotnet_type { condition: magic.type() matches /Mono\/\.Net assembly/ }
rule magic_mach_o { condition: magic.type() icontains "mach-o 64-bit" }
// yara does not ask libmagic about an empty file.
rule magic_empty { condition: not defined magic.type() and not defined magic.mime_type() }
rule macho_constants {
    condition: macho.MH_MAGIC == 0xfeedface and macho.MH_CIGAM_64 == 0xcffaedfe and macho.FAT_MAGIC == 0xcafebabe and
        macho.CPU_TYPE_X86_64 == 0x01000007 and macho.MH_EXECUTE == 2 and filesize > 1MB
}
rule macho_header {
    condition: macho.magic == macho.MH_MAGIC_64 and macho.cputype == macho.CPU_TYPE_X86_64 and
        macho.filetype == macho.MH_EXECUTE and macho.flags & macho.MH_PIE and macho.ncmds == 0
}
rule macho_undefined {
    condition: not defined macho.magic and not defined macho.fat_magic and not defined macho.nfat_arch
}
rule macho_not_fat {
    condition: defined macho.magic and not defined macho.fat_magic and macho.number_of_segments == 0
}
rule never_macho_fat_index { condition: defined macho.file_index_for_arch(macho.CPU_TYPE_X86_64) }
rule never_macho_fat_entry {
    condition: defined macho.entry_point_for_arch(macho.CPU_TYPE_X86_64, macho.CPU_SUBTYPE_X86_64_ALL)
}
rule never_macho_segments { condition: for any s in macho.segments : (s.segname == "__TEXT") }
rule dex_constants {
    condition: dex.DEX_FILE_MAGIC_035 == "dex\n035" and dex.ENDIAN_CONSTANT == 0x12345678 and filesize < 100
}
rule dex_header {
    condition: dex.header.magic == dex.DEX_FILE_MAGIC_035 and dex.header.endian_tag == dex.ENDIAN_CONSTANT and
        dex.header.header_size == 0x70 and dex.header.file_size == filesize
}
// The 20-byte SHA-1 signature field is all zeros: yara reads it as an empty string.
rule dex_empty_signature { condition: dex.header.signature == "" and dex.number_of_methods == 0 }
rule dex_undefined { condition: not defined dex.header.magic and not defined dex.number_of_fields }
rule never_dex_has_method { condition: dex.has_method("main") or dex.has_class("LMain;") }
rule never_dex_string_ids { condition: for any s in dex.string_ids : (s.value == "main") }
)yar" },
        // yara prints console.log()'s messages on its standard output, between the rule lines; only RULE PATH
        // and -s lines are compared.
        { "console messages between the rule lines", R"yar(
import "console"
import "pe"
import "math"

rule log_text { condition: console.log("hitscope console text") and pe.is_pe }
rule log_integer { condition: console.log("sections: ", pe.number_of_sections) }
rule log_string_field { condition: console.log(pe.sections[0].name) and pe.sections[0].name == ".text" }
rule log_float {
    condition: console.log("entropy: ", math.entropy(0, filesize)) and math.entropy(0, filesize) > 5.0
}
rule log_string_pair { condition: console.log("company: ", pe.version_info["CompanyName"]) }
rule hex_integer { condition: console.hex(pe.machine) and pe.machine == pe.MACHINE_I386 }
rule hex_with_message { condition: console.hex("machine: ", pe.machine) and pe.is_64bit() }
rule never_log_undefined { condition: console.log(pe.sections[100].name) }
rule never_log_undefined_negated { condition: not console.log("size: ", pe.sections[100].virtual_size) }
rule log_in_or { condition: (pe.is_pe or console.log("not a PE: ", filesize)) and filesize > 0 }
rule log_in_loop {
    condition: for 2 s in pe.sections : (console.log("section ", s.name) and s.name startswith ".r")
}
)yar" },
        { "strings placed by module values", R"yar(
import "pe"
import "elf"
import "math"
import "hash"
import "dotnet"

rule mz_and_sections { strings: $mz = "MZ" condition: $mz at 0 and pe.number_of_sections > 2 }
rule mz_without_pe { strings: $mz = { 4D 5A } condition: $mz at 0 and not pe.is_pe }
rule pe_header_by_hand { condition: uint32(uint32(0x3c)) == 0x4550 and not pe.is_pe }
rule strings_and_imports {
    strings: $dll = "mscoree.dll" nocase $fn = "_CorDllMain"
    condition: any of them and pe.imports("mscoree.dll", "_CorDllMain")
}
rule strings_without_imports { strings: $efi = "UEFI" condition: $efi and not pe.imports(/./, /./) }
rule string_at_entry_point {
    strings: $prologue = { 48 83 EC 08 51 52 48 8D } $jmp = { FF 25 00 20 40 00 }
    condition: $prologue at pe.entry_point or $jmp at pe.entry_point
}
rule string_at_elf_entry_point { strings: $start = { 31 ED 49 89 D1 5E } condition: $start at elf.entry_point }
// yara warns of the deprecated keyword, and still reads the PE's or the ELF's entry point with it.
rule deprecated_entrypoint {
    strings: $prologue = { 48 83 EC 08 51 52 48 8D } $start = { 31 ED 49 89 D1 5E }
    condition: $prologue at entrypoint or $start at entrypoint
}
rule string_in_indexed_section {
    strings: $ident = "UEFI SHIM" $fn = "_CorDllMain"
    condition:
        $ident in (pe.sections[3].raw_data_offset .. pe.sections[3].raw_data_offset + pe.sections[3].raw_data_size) or
        $fn in (pe.sections[0].raw_data_offset .. pe.sections[0].raw_data_offset + pe.sections[0].raw_data_size)
}
rule string_in_sbat_section {
    strings: $sbat = "sbat,1,"
    condition: for any s in pe.sections : (s.name == ".sbat" and
        $sbat in (s.raw_data_offset .. s.raw_data_offset + s.raw_data_size))
}
rule string_in_section_loop {
    strings: $shim = "shim,"
    condition: for any i in (0 .. pe.number_of_sections - 1) :
        ($shim in (pe.sections[i].raw_data_offset .. pe.sections[i].raw_data_offset + pe.sections[i].raw_data_size)
         and pe.sections[i].full_name == ".sbatlevel")
}
rule count_above_sections { strings: $shim = "shim" nocase condition: #shim > pe.number_of_sections * 2 }
rule first_offset_in_text {
    strings: $shim = "shim"
    condition: @shim[1] > pe.sections[pe.section_index(".text")].raw_data_offset
}
rule hash_of_match { strings: $mz = "MZ" condition: hash.md5(@mz[1], !mz[1]) == hash.md5("MZ") and pe.is_pe }
rule entropy_near_match { strings: $sbat = "sbat,1,SBAT Version" condition: math.entropy(@sbat[1], 64) > 4.0 }
rule usage_in_rodata {
    strings: $usage = "Usage: yara"
    condition: for any s in elf.sections : (s.name == ".rodata" and $usage in (s.offset .. s.offset + s.size))
}
rule elf_magic_and_type { strings: $elf = { 7F 45 4C 46 } condition: $elf at 0 and elf.type == elf.ET_REL }
rule dotnet_wide_string {
    strings: $s = "mscorlib.dll" wide
    condition: dotnet.is_dotnet and #s >= 1 and dotnet.module_name == "mscorlib.dll"
}
rule offset_from_version_info {
    strings: $v = "Mono development team" wide
    condition: pe.version_info["CompanyName"] == "Mono development team" and
        for any i in (1 .. #v) : (@v[i] >= pe.resources[0].offset and
            @v[i] < pe.resources[0].offset + pe.resources[0].length)
}
rule module_value_in_string_count {
    strings: $text = ".text"
    condition: #text in (0 .. pe.size_of_headers) == 1 and pe.section_index(".text") >= 0
}
)yar" },
    };
}

/// One rule of the refusals file: refused by yara when alone, or a good rule between the refused ones.
struct RefusalEntry
{
    const char *name;   ///< the rule's name
    QByteArray text;    ///< the rule, with an import line before it where it needs one
    bool refused;
    /// Part of yara's words for it, and of Hitscope's: the kind of error (yara names "imports" where Hitscope may
    /// name "pe.imports"); empty: not checked.
    const char *reason;
};

/// Every file of the refusals imports these (macho is left out on purpose).
const QByteArray kRefusalImports =
    "import \"pe\"\nimport \"elf\"\nimport \"math\"\nimport \"hash\"\nimport \"dotnet\"\n";

std::vector<RefusalEntry> refusalEntries()
{
    return {
        { "good_pe", R"(rule good_pe { condition: pe.is_pe and pe.number_of_sections > 2 })", false, "" },
        { "unknown_field", R"(rule unknown_field { condition: pe.nope == 1 })", true, R"(invalid field name "nope")" },
        { "unknown_nested_field", R"(rule unknown_nested_field { condition: pe.sections[0].nope == 1 })", true,
          R"(invalid field name "nope")" },
        // Functions later yaras have: 4.2.3 does not know them.
        { "function_of_later_yara", R"(rule function_of_later_yara { condition: elf.telfhash() == "" })", true,
          R"(invalid field name "telfhash")" },
        { "field_of_later_yara", R"(rule field_of_later_yara { condition: dotnet.number_of_classes > 0 })", true,
          R"(invalid field name "number_of_classes")" },
        { "math_function_of_later_yara", R"(rule math_function_of_later_yara { condition: math.to_string(1) == "1" })",
          true, R"(invalid field name "to_string")" },
        { "good_elf", R"(rule good_elf { condition: elf.type == elf.ET_DYN and elf.number_of_sections > 20 })",
          false, "" },
        { "integer_where_strings_go", R"(rule integer_where_strings_go { condition: pe.imports(1) })", true,
          "wrong arguments for function" },
        { "too_many_arguments", R"(rule too_many_arguments { condition: pe.exports(1, 2) })", true,
          "wrong arguments for function" },
        { "string_where_integers_go", R"(rule string_where_integers_go { condition: math.entropy("a", 1) > 1.0 })",
          true, "wrong arguments for function" },
        { "regex_where_integers_go", R"(rule regex_where_integers_go { condition: pe.section_index(/text/) == 1 })",
          true, "wrong arguments for function" },
        { "indexing_an_integer", R"(rule indexing_an_integer { condition: pe.machine[0] == 1 })", true,
          "is not an array or dictionary" },
        { "indexing_a_dictionary_twice",
          R"(rule indexing_a_dictionary_twice { condition: pe.version_info["a"]["b"] == "x" })", true,
          "is not an array or dictionary" },
        { "good_math", R"(rule good_math { condition: math.entropy(0, filesize) > 5.0 })", false, "" },
        { "structure_as_value", R"(rule structure_as_value { condition: pe.sections })", true,
          "wrong usage of identifier" },
        { "array_item_as_value", R"(rule array_item_as_value { condition: pe.sections[0] == 1 })", true,
          "wrong usage of identifier" },
        { "function_without_call", R"(rule function_without_call { condition: pe.is_dll })", true,
          "wrong usage of identifier" },
        { "calling_a_field", R"(rule calling_a_field { condition: pe.number_of_sections() == 1 })", true,
          "is not a function" },
        { "calling_a_constant", R"(rule calling_a_constant { condition: pe.DLL() })", true,
          "is not a function" },
        { "integer_dictionary_key", R"(rule integer_dictionary_key { condition: pe.version_info[0] == "x" })", true,
          "dictionary keys must be of string type" },
        { "string_array_index", R"(rule string_array_index { condition: pe.sections["a"].name == "x" })", true,
          "array indexes must be of integer type" },
        { "good_hash",
          R"(rule good_hash { strings: $mz = "MZ" condition: $mz at 0 and hash.md5(0, 2) == hash.md5("MZ") })", false,
          "" },
        { "iterating_an_integer",
          R"(rule iterating_an_integer { condition: for any s in pe.number_of_sections : (true) })", true,
          "is not iterable" },
        { "pairs_over_an_array", R"(rule pairs_over_an_array { condition: for any k, v in pe.sections : (true) })",
          true, "yields a single item on each iteration" },
        { "one_variable_over_a_dictionary",
          R"(rule one_variable_over_a_dictionary { condition: for any e in pe.version_info : (true) })", true,
          "yields a key,value pair" },
        { "loop_variable_as_value",
          R"(rule loop_variable_as_value { condition: for any s in pe.sections : (s == 1) })", true,
          "wrong usage of identifier" },
        // yara 4.2.3 has no percentage of an array and enumerates integers only.
        { "percent_over_an_array",
          R"(rule percent_over_an_array { condition: for 50% s in pe.sections : (true) })", true, "" },
        { "string_enumeration",
          R"(rule string_enumeration { condition: for any n in (".text", ".data") : (pe.sections[0].name == n) })",
          true, "wrong type for enumeration item" },
        { "good_dotnet", R"(rule good_dotnet { condition: dotnet.is_dotnet and dotnet.number_of_streams == 5 })", false,
          "" },
        { "function_result_mismatch", R"(rule function_result_mismatch { condition: pe.is_dll() == "x" })", true,
          "type mismatch" },
        { "string_field_arithmetic", R"(rule string_field_arithmetic { condition: pe.sections[0].name + 1 == 2 })",
          true, "type mismatch" },
        { "hash_compared_to_integer", R"(rule hash_compared_to_integer { condition: hash.md5(0, filesize) == 1 })",
          true, "type mismatch" },
        { "module_not_imported", R"(rule module_not_imported { condition: macho.magic == macho.MH_MAGIC })", true,
          R"(undefined identifier "macho")" },
        // yara says `unknown module "nosuchmodule"` of the import, then refuses the rule.
        { "unknown_module", "import \"nosuchmodule\"\nrule unknown_module { condition: nosuchmodule.x == 1 }", true,
          R"("nosuchmodule")" },
        { "good_last", R"(rule good_last { condition: not pe.is_pe and not defined elf.type and filesize > 0 })",
          false, "" },
    };
}

QByteArray hexDigest(QCryptographicHash::Algorithm algorithm, const QByteArray &data)
{
    return QCryptographicHash::hash(data, algorithm).toHex();
}

quint32 crc32(const QByteArray &data)
{
    quint32 crc = 0xffffffffu;
    for (char c : data) {
        crc ^= quint8(c);
        for (int bit = 0; bit < 8; ++bit)
            crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

/// hash.checksum32: the sum of the bytes, modulo 2^32.
quint32 checksum32(const QByteArray &data)
{
    quint32 sum = 0;
    for (char c : data)
        sum += quint8(c);
    return sum;
}

/// The raw bytes of section `index` of a PE file, read from its section table here rather than taken from yara.
QByteArray peSectionBytes(const QByteArray &pe, int index)
{
    const auto u16 = [&](qsizetype at) { return qFromLittleEndian<quint16>(pe.constData() + at); };
    const auto u32 = [&](qsizetype at) { return qFromLittleEndian<quint32>(pe.constData() + at); };
    const qsizetype header = u32(0x3c);
    const qsizetype section = header + 24 + u16(header + 20) + 40 * index;
    return pe.mid(u32(section + 20), u32(section + 16));
}

/// A 64-bit x86-64 Mach-O executable header with no load commands (MH_NOUNDEFS | MH_DYLDLINK | MH_TWOLEVEL |
/// MH_PIE), padded to 64 bytes.
QByteArray tinyMachO()
{
    QByteArray m(64, '\0');
    const quint32 header[] = { 0xfeedfacfu, 0x01000007u, 3, 2, 0, 0, 0x00200085u, 0 };
    for (size_t i = 0; i < std::size(header); ++i)
        qToLittleEndian(header[i], m.data() + 4 * i);
    return m;
}

/// A 0x70-byte DEX 035 header: file and header size 0x70, the little-endian tag, every table empty.
QByteArray tinyDex()
{
    QByteArray d(0x70, '\0');
    d.replace(0, 8, QByteArray("dex\n035\0", 8));
    qToLittleEndian(quint32(0x70), d.data() + 0x20);
    qToLittleEndian(quint32(0x70), d.data() + 0x24);
    qToLittleEndian(quint32(0x12345678), d.data() + 0x28);
    return d;
}

QStringList ruleNames(const QByteArray &rules)
{
    static const QRegularExpression rule(QStringLiteral(R"(^rule\s+(\w+))"), QRegularExpression::MultilineOption);
    QStringList names;
    for (auto it = rule.globalMatch(QString::fromUtf8(rules)); it.hasNext();)
        names << it.next().captured(1);
    return names;
}

/// The RULE PATH lines (for one of `files`) and -s lines of a scan's output: what console.log() prints in between
/// ("section /4", "0x8664") is left out.
QByteArray ruleLines(const QByteArray &out, const QStringList &files)
{
    static const QRegularExpression matchLine(QStringLiteral(R"(^0x[0-9a-f]+:\$)"));
    QByteArray kept;
    for (const QByteArray &line : out.split('\n')) {
        const qsizetype space = line.indexOf(' ');
        if ((space > 0 && files.contains(QString::fromUtf8(line.mid(space + 1))))
            || matchLine.match(QString::fromUtf8(line)).hasMatch())
            kept += line + '\n';
    }
    return kept;
}

/// `hitscope-cli -c`'s or yara's `PATH: N` lines for `files`, sorted.
QStringList countLines(const QByteArray &out, const QStringList &files)
{
    QStringList lines;
    for (const QByteArray &line : out.split('\n')) {
        const QString text = QString::fromUtf8(line);
        const qsizetype colon = text.lastIndexOf(QLatin1String(": "));
        if (colon > 0 && files.contains(text.left(colon)))
            lines << text;
    }
    lines.sort();
    return lines;
}

/// hitscope-cli's "rule rejected" lines on `err`, each followed by a new line.
QString rejections(const QByteArray &err)
{
    QString lines;
    for (const QByteArray &line : err.split('\n'))
        if (line.contains("rule rejected"))
            lines += QString::fromUtf8(line) + QLatin1Char('\n');
    return lines;
}

/// The hitscope-cli rejections on `err` of rules in `rules` file: rule name -> (line, reason).
std::map<QString, std::pair<int, QString>> rejectedRules(const QByteArray &err, const QString &rules)
{
    const QRegularExpression re(QStringLiteral(R"(rule rejected: %1:(\d+): rule (\w+): (.*)$)")
                                    .arg(QRegularExpression::escape(rules)),
                                QRegularExpression::MultilineOption);
    std::map<QString, std::pair<int, QString>> rejected;
    for (auto it = re.globalMatch(QString::fromUtf8(err)); it.hasNext();) {
        const QRegularExpressionMatch m = it.next();
        rejected[m.captured(2)] = { m.captured(1).toInt(), m.captured(3) };
    }
    return rejected;
}

} // namespace

class TestYaraModules : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void sameLinesAsYara_data();
    void sameLinesAsYara();
    void sameCountsAsYara_data();
    void sameCountsAsYara();
    void gpuEngineSameAsYara();
    void consoleOutputAsYara();
    void refusedAsYara_data();
    void refusedAsYara();
    void refusedAmongGoodRules();

private:
    QString writeRules(const QString &name, const QByteArray &text);
    YaraReport yaraReport(const QString &rules, QByteArray *errors);
    void compareWithYara(const QString &rules, const YaraReport &expected, const QStringList &engine);

    QTemporaryDir m_tmp;
    QStringList m_samples; ///< every file both tools scan, as both are given it
    QList<std::pair<QByteArray, QByteArray>> m_values; ///< @NAME@ -> its value in the rule files
};

void TestYaraModules::initTestCase()
{
    QVERIFY(m_tmp.isValid());
    for (const QString &f : kInstalled) {
        QVERIFY2(QFile::exists(f), qPrintable(f + QStringLiteral(" is missing: run packaging/setup.sh")));
        // libyara.so.9 is a symbolic link, which yara follows and hitscope-cli skips without -L: both get the file.
        m_samples << QFileInfo(f).canonicalFilePath();
    }
    const auto read = [](const QString &path) {
        QFile f(path);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    };
    const QByteArray shim = read(kInstalled[0]);
    const QByteArray fb = read(kInstalled[2]);
    QVERIFY(shim.size() > 4096 && !fb.isEmpty());

    QByteArray farHeader = shim;
    qToLittleEndian(quint32(0x7fff0000), farHeader.data() + 0x3c);
    const std::vector<std::pair<QString, QByteArray>> written = {
        { QStringLiteral("text.txt"), "Plain text that names kernel32.dll and GetProcAddress.\n" },
        { QStringLiteral("empty.bin"), {} },
        { QStringLiteral("pe-cut-at-300.bin"), shim.left(300) },
        { QStringLiteral("pe-cut-at-4096.bin"), shim.left(4096) },
        { QStringLiteral("e_lfanew-past-end.efi"), farHeader },
        { QStringLiteral("mz.bin"), "MZ" },
        { QStringLiteral("tiny.macho"), tinyMachO() },
        { QStringLiteral("tiny.dex"), tinyDex() },
    };
    for (const auto &[name, data] : written) {
        const QString path = m_tmp.filePath(QStringLiteral("samples/") + name);
        QVERIFY(writeFile(path, data));
        m_samples << path;
    }

    // Hash values computed here, so that the hash rules match what the files hold today.
    const QByteArray yara = read(kInstalled[4]);
    const QByteArray lib = read(kInstalled[5]);
    const QByteArray corlib = read(kInstalled[3]);
    QVERIFY(!yara.isEmpty() && !lib.isEmpty() && !corlib.isEmpty());
    const QByteArray md5Fb = hexDigest(QCryptographicHash::Md5, fb);
    m_values = {
        { "@MD5_FBX64@", md5Fb },
        { "@MD5_FBX64_UPPER@", md5Fb.toUpper() },
        { "@SHA1_MSCORLIB@", hexDigest(QCryptographicHash::Sha1, corlib) },
        { "@SHA256_YARA@", hexDigest(QCryptographicHash::Sha256, yara) },
        { "@CRC32_LIBYARA@", QByteArray::number(crc32(lib)) },
        { "@CHECKSUM32_SHIMX64@", QByteArray::number(checksum32(shim)) },
        { "@MD5_SHIMX64_HEAD64@", hexDigest(QCryptographicHash::Md5, shim.left(64)) },
        { "@SHA256_SHIMX64_SECTION1@", hexDigest(QCryptographicHash::Sha256, peSectionBytes(shim, 1)) },
        { "@MD5_MZ@", hexDigest(QCryptographicHash::Md5, "MZ") },
        { "@MD5_ELF_MAGIC@", hexDigest(QCryptographicHash::Md5, "\x7f" "ELF") },
        { "@CRC32_MZ@", QByteArray::number(crc32("MZ")) },
        { "@MD5_ABC@", hexDigest(QCryptographicHash::Md5, "abc") },
        { "@SHA1_ABC@", hexDigest(QCryptographicHash::Sha1, "abc") },
        { "@SHA256_ABC@", hexDigest(QCryptographicHash::Sha256, "abc") },
        { "@CRC32_ABC@", QByteArray::number(crc32("abc")) },
    };
}

/// `text` with its @NAME@ values, written under rules/ as `name` made a file name.
QString TestYaraModules::writeRules(const QString &name, const QByteArray &text)
{
    QByteArray expanded = text;
    for (const auto &[key, value] : m_values)
        expanded.replace(key, value);
    static const QRegularExpression unsafe(QStringLiteral("[^A-Za-z0-9_/]+"));
    const QString path = m_tmp.filePath(QStringLiteral("rules/") + QString(name).replace(unsafe, QStringLiteral("-"))
                                        + QStringLiteral(".yar"));
    return writeFile(path, expanded) ? path : QString();
}

/// yara -s on each sample (yara 4.2.3 scans one file per run), the RULE PATH and -s lines of all of them.
YaraReport TestYaraModules::yaraReport(const QString &rules, QByteArray *errors)
{
    QByteArray out;
    for (const QString &file : m_samples) {
        QByteArray err;
        out += runYara({ QStringLiteral("-s"), rules, file }, &err);
        // Warnings (the deprecated entrypoint) are fine; an error means the rule file tests nothing.
        if (err.contains("error"))
            *errors += err;
    }
    return parseYaraReport(ruleLines(out, m_samples));
}

/// hitscope-cli scan -s on all the samples at once (with `engine`'s options) prints `expected`.
void TestYaraModules::compareWithYara(const QString &rules, const YaraReport &expected, const QStringList &engine)
{
    QByteArray ours, err;
    const int rc = runCli(QStringList{ QStringLiteral("scan") } + engine + QStringList{ QStringLiteral("-s"), rules }
                              + m_samples,
                          &ours, &err);
    // Rejections and differences in one message: what the accepted rules print is worth seeing too.
    const YaraReport got = parseYaraReport(ruleLines(ours, m_samples));
    QVERIFY2(rejections(err).isEmpty() && expected == got,
             qPrintable(rejections(err) + describeReportDifference(expected, got)));
    QVERIFY2(rc == 0, err.constData());
}

void TestYaraModules::sameLinesAsYara_data()
{
    QTest::addColumn<QByteArray>("rules");
    for (const ModuleRules &r : moduleRules())
        QTest::newRow(r.row) << r.text;
}

void TestYaraModules::sameLinesAsYara()
{
    QFETCH(QByteArray, rules);
    const QString path = writeRules(QLatin1String(QTest::currentDataTag()), rules);
    QVERIFY(!path.isEmpty());

    // Each rule's samples, in yara: a rule that matches everywhere or nowhere by accident would test little.
    QByteArray yaraErrors;
    const YaraReport expected = yaraReport(path, &yaraErrors);
    QVERIFY2(yaraErrors.isEmpty(), yaraErrors.constData());
    QStringList wrong;
    for (const QString &name : ruleNames(rules)) {
        qsizetype matched = 0;
        for (const auto &entry : expected)
            matched += entry.first.first == name.toUtf8();
        const bool ok = name.startsWith(QLatin1String("never_"))    ? matched == 0
                        : name.startsWith(QLatin1String("always_")) ? matched == m_samples.size()
                                                                    : matched > 0 && matched < m_samples.size();
        if (!ok)
            wrong << QStringLiteral("%1 (%2 of %3 files)").arg(name).arg(matched).arg(m_samples.size());
    }
    QVERIFY2(wrong.isEmpty(), qPrintable(QStringLiteral("in yara, against their names (did a sample change?): ")
                                         + wrong.join(QLatin1String(", "))));

    compareWithYara(path, expected, {});
}

void TestYaraModules::sameCountsAsYara_data()
{
    sameLinesAsYara_data();
}

void TestYaraModules::sameCountsAsYara()
{
    QFETCH(QByteArray, rules);
    const QString path = writeRules(QLatin1String(QTest::currentDataTag()) + QStringLiteral("-c"), rules);
    QVERIFY(!path.isEmpty());
    QStringList expected;
    for (const QString &file : m_samples) {
        QByteArray err;
        // With one file yara -c prints the bare count, last: console.log()'s lines come before it.
        const QByteArrayList lines = runYara({ QStringLiteral("-c"), path, file }, &err).trimmed().split('\n');
        QVERIFY2(!err.contains("error"), err.constData());
        expected << file + QStringLiteral(": ") + QString::fromUtf8(lines.last());
    }
    expected.sort();

    QByteArray ours, err;
    const int rc = runCli(QStringList{ QStringLiteral("scan"), QStringLiteral("-c"), path } + m_samples, &ours, &err);
    const QStringList got = countLines(ours, m_samples);
    QStringList differences;
    for (const QString &line : expected)
        if (!got.contains(line))
            differences << QStringLiteral("yara: ") + line;
    for (const QString &line : got)
        if (!expected.contains(line))
            differences << QStringLiteral("ours: ") + line;
    QVERIFY2(rejections(err).isEmpty() && differences.isEmpty(),
             qPrintable(rejections(err) + differences.join(QLatin1Char('\n'))));
    QVERIFY2(rc == 0, err.constData());
}

void TestYaraModules::consoleOutputAsYara()
{
    // The console module writes while conditions are evaluated: yara prints its messages on stdout, each call
    // (no two calls are one), before the file's rule lines; undefined arguments write nothing.
    const QString rules = writeRules(QStringLiteral("console-output"), R"yar(
import "console"
import "pe"
rule hello { condition: console.log("hello") and pe.is_pe }
rule sections { condition: console.log("sections: ", pe.number_of_sections) and console.hex(255) }
rule hello_again { condition: console.log("hello") }
rule hex_of_machine { condition: console.hex("machine: ", pe.machine) }
)yar");
    for (const QString &file : m_samples) {
        QByteArray err, ours;
        const QByteArray theirs = runYara({ rules, file }, &err);
        QCOMPARE(runCli({ QStringLiteral("scan"), rules, file }, &ours, &err), 0);
        QCOMPARE(ours, theirs);
        QCOMPARE(theirs.count("hello\n"), 2); // the same message twice, from two rules

        // With --json, the same messages as console records of the file, in order.
        QByteArray json;
        QCOMPARE(runCli({ QStringLiteral("scan"), QStringLiteral("--json"), rules, file }, &json, &err), 0);
        QByteArray messages;
        for (const QByteArray &line : json.split('\n')) {
            const QJsonObject record = QJsonDocument::fromJson(line).object();
            if (record.value(QStringLiteral("type")).toString() != QLatin1String("console"))
                continue;
            QCOMPARE(record.value(QStringLiteral("file")).toString(), file);
            messages += record.value(QStringLiteral("message")).toString().toUtf8() + '\n';
        }
        QVERIFY(theirs.startsWith(messages));
        QCOMPARE(messages.count("hello\n"), 2);
    }
}

void TestYaraModules::gpuEngineSameAsYara()
{
    // Hits must not depend on the engine; one rule file is enough here (Mesa's software Vulkan is slow).
    QByteArray out, err;
    runCli({ QStringLiteral("devices") }, &out, &err);
    if (!out.contains("self-test: passed") && !err.contains("self-test: passed"))
        HITSCOPE_SKIP_WITHOUT_GPU("no GPU device passes hitscope-cli devices' self-test");
    for (const ModuleRules &r : moduleRules())
        if (qstrcmp(r.row, "strings placed by module values") == 0) {
            const QString path = writeRules(QStringLiteral("gpu"), r.text);
            QVERIFY(!path.isEmpty());
            QByteArray yaraErrors;
            const YaraReport expected = yaraReport(path, &yaraErrors);
            QVERIFY2(yaraErrors.isEmpty(), yaraErrors.constData());
            compareWithYara(path, expected, { QStringLiteral("--engine"), QStringLiteral("gpu") });
            return;
        }
    QFAIL("no rule file of strings placed by module values");
}

void TestYaraModules::refusedAsYara_data()
{
    QTest::addColumn<QByteArray>("rule");
    QTest::addColumn<bool>("refused");
    QTest::addColumn<QString>("reason");
    for (const RefusalEntry &e : refusalEntries())
        QTest::newRow(e.name) << e.text << e.refused << QString::fromUtf8(e.reason);
}

void TestYaraModules::refusedAsYara()
{
    // Alone in its file, a rule is refused by Hitscope exactly when yara refuses it, in yara's words.
    QFETCH(QByteArray, rule);
    QFETCH(bool, refused);
    QFETCH(QString, reason);
    const QString name = QLatin1String(QTest::currentDataTag());
    const QString path = writeRules(QStringLiteral("alone/") + name, kRefusalImports + rule + '\n');
    QVERIFY(!path.isEmpty());
    const QString sample = kInstalled[4];
    QByteArray yaraErr;
    runYara({ path, sample }, &yaraErr);
    QVERIFY2(yaraErr.contains("error") == refused,
             refused ? "yara accepts it: the row tests nothing" : yaraErr.constData());
    QVERIFY2(yaraErr.contains(reason.toUtf8()), yaraErr.constData());

    QByteArray out, err;
    runCli({ QStringLiteral("scan"), path, sample }, &out, &err);
    const auto rejected = rejectedRules(err, path);
    const auto it = rejected.find(name);
    QVERIFY2((it != rejected.end()) == refused, err.constData());
    if (refused)
        QVERIFY2(it->second.second.contains(reason),
                 qPrintable(QStringLiteral("refused, not in yara's words (%1): %2").arg(reason, it->second.second)));
}

void TestYaraModules::refusedAmongGoodRules()
{
    // yara refuses the whole file; Hitscope refuses exactly the rules yara refuses alone, at their lines, and the
    // good rules around them print what yara prints for a file of the good rules only.
    QByteArray mixed = kRefusalImports, good = kRefusalImports;
    std::map<QString, int> refusedAt;
    for (const RefusalEntry &e : refusalEntries()) {
        const QByteArray text = e.text + '\n';
        // The rule's own line: after the lines so far and any import line of its own.
        if (e.refused)
            refusedAt[QString::fromUtf8(e.name)] =
                int(mixed.count('\n') + text.left(text.indexOf("rule ")).count('\n')) + 1;
        else
            good += text;
        mixed += text;
    }
    const QString mixedPath = writeRules(QStringLiteral("refusals"), mixed);
    const QString goodPath = writeRules(QStringLiteral("refusals-good-only"), good);
    QVERIFY(!mixedPath.isEmpty() && !goodPath.isEmpty());
    QByteArray yaraErrors;
    const YaraReport expected = yaraReport(goodPath, &yaraErrors);
    QVERIFY2(yaraErrors.isEmpty(), yaraErrors.constData());
    QVERIFY(!expected.empty());

    QByteArray ours, err;
    const int rc =
        runCli(QStringList{ QStringLiteral("scan"), QStringLiteral("-s"), mixedPath } + m_samples, &ours, &err);
    QVERIFY2(rc == 2, err.constData()); // the scan ran, some rules were skipped
    QStringList differences;
    const auto rejected = rejectedRules(err, mixedPath);
    for (const auto &[name, line] : refusedAt) {
        const auto it = rejected.find(name);
        if (it == rejected.end())
            differences << QStringLiteral("not refused: %1").arg(name);
        else if (it->second.first != line)
            differences << QStringLiteral("%1 refused at line %2, not %3").arg(name).arg(it->second.first).arg(line);
    }
    for (const auto &[name, where] : rejected)
        if (!refusedAt.count(name))
            differences << QStringLiteral("refused, yara takes it: %1: %2").arg(name, where.second);
    QVERIFY2(differences.isEmpty(),
             qPrintable(differences.join(QLatin1Char('\n')) + QLatin1Char('\n') + QString::fromUtf8(err)));
    QVERIFY2(err.contains(R"(unknown module "nosuchmodule")"), err.constData());
    const YaraReport got = parseYaraReport(ruleLines(ours, m_samples));
    QVERIFY2(expected == got, qPrintable(describeReportDifference(expected, got)));
}

QTEST_GUILESS_MAIN(TestYaraModules)
#include "tst_yaramodules.moc"
