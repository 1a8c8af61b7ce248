// SPDX-License-Identifier: GPL-3.0-or-later
// Fuzz target for the YARA modules in conditions: the bytes are a file (the seeds are small PE32, PE32+, ELF,
// Mach-O and DEX files), and one rule set reads every module's fields, items, dictionaries and functions over it
// through the RuleEvaluator, as a scan does: libyara parses the file (truncated headers, absurd counts and
// offsets), and the module layer walks what it built and calls its functions. Nothing may crash, hang or leak.
#include <cstddef>
#include <cstdint>
#include <memory>

#include <QFile>
#include <QTemporaryDir>

#include "rules/ruleloader.h"
#include "scan/ruleevaluator.h"

using namespace Hitscope;

namespace {

constexpr size_t kMaxInput = 64 * 1024;

// Without strings, so that every condition is evaluated on every input.
const char kRules[] = R"yar(
import "pe"
import "elf"
import "math"
import "hash"
import "dotnet"
import "macho"
import "dex"
import "time"
rule pe_fields { condition: pe.is_pe and pe.number_of_sections > 0 and pe.entry_point >= 0 and
    pe.machine == pe.MACHINE_AMD64 and pe.size_of_image > 0 and pe.timestamp != 1 and pe.is_dll() and pe.is_64bit() }
rule pe_sections { condition: for any s in pe.sections : (s.name == ".text" and s.raw_data_size > 0 and
    math.entropy(s.raw_data_offset, s.raw_data_size) > 0.5) }
rule pe_sections_indexed { condition: for any i in (0 .. pe.number_of_sections) :
    (pe.sections[i].virtual_address == pe.entry_point or pe.section_index(pe.sections[i].name) == i) }
rule pe_imports { condition: pe.imports("kernel32.dll", "GetProcAddress") or pe.imports("kernel32.dll") > 0 or
    pe.imports(/kernel/i, /^Get/) > 0 or pe.imports(pe.IMPORT_ANY, "a.dll", "f") or pe.number_of_imports > 3 }
rule pe_exports { condition: pe.exports("Func") or pe.exports(/^F/) or pe.exports(1) or pe.exports_index("Func") >= 0
    or pe.number_of_exports > 1 or pe.dll_name == "seed.dll" }
rule pe_hashes { condition: pe.imphash() == "00" or pe.rich_signature.clear_data contains "DanS" or
    pe.calculate_checksum() == pe.checksum or pe.rva_to_offset(pe.entry_point) > 0 }
rule pe_resources { condition: for any r in pe.resources : (r.length > 0 and r.type == pe.RESOURCE_TYPE_VERSION)
    or for any k, v in pe.version_info : (k == "CompanyName" and v != "") or pe.number_of_resources > 2 }
rule pe_signatures { condition: for any i in (0 .. pe.number_of_signatures) : (pe.signatures[i].issuer contains "CN"
    or pe.signatures[i].valid_on(1600000000)) or for any s in pe.signatures : (s.serial == "00") }
rule pe_directories { condition: for any d in pe.data_directories : (d.size > 0x1000) or pe.overlay.size > 0 or
    pe.pdb_path != "" or pe.rich_signature.version(1) > 0 or pe.rich_signature.toolid(1) > 0 }
rule elf_fields { condition: elf.type == elf.ET_EXEC and elf.machine == elf.EM_X86_64 and elf.entry_point > 0 }
rule elf_tables { condition: for any s in elf.sections : (s.name == ".text" and s.size > 0) or
    for any s in elf.symtab : (s.name == "main") or for any s in elf.dynsym : (s.name == "f") or
    for any s in elf.segments : (s.type == elf.PT_LOAD) or for any d in elf.dynamic : (d.type == 1) }
rule dotnet_all { condition: dotnet.is_dotnet and (dotnet.version != "" or dotnet.number_of_streams > 1 or
    for any s in dotnet.streams : (s.name == "#~") or for any g in dotnet.guids : (g != "") or
    for any r in dotnet.resources : (r.length > 0) or dotnet.assembly.name != "" or
    for any u in dotnet.user_strings : (u != "")) }
rule macho_all { condition: macho.magic == macho.MH_MAGIC_64 and (macho.number_of_segments > 0 or
    for any s in macho.segments : (s.segname == "__TEXT") or macho.file_index_for_arch(7) >= 0 or
    macho.entry_point_for_arch(7) > 0 or macho.fat_magic == macho.FAT_MAGIC) }
rule dex_all { condition: dex.header.magic == dex.DEX_FILE_MAGIC_035 and (dex.header.file_size > 0 or
    for any s in dex.string_ids : (s.value == "x") or for any m in dex.method_ids : (m.name_idx == 1) or
    dex.has_method("x") or dex.has_class("x")) }
rule math_hash { condition: math.entropy(0, filesize) > 7.5 or math.mean(0, filesize) > 200.0 or
    math.deviation(0, filesize, math.MEAN_BYTES) > 1.0 or math.serial_correlation(0, filesize) > 0.5 or
    math.monte_carlo_pi(0, filesize) < 0.1 or math.count(0, 0, filesize) > 100 or
    math.percentage(0xff) > 0.5 or math.mode() == 0 or hash.md5(0, filesize) == "x" or
    hash.sha256(1, filesize - 2) == "x" or hash.crc32(0, 64) == 1 or hash.checksum32(0, filesize) == 1 or
    hash.sha1(filesize \ 2, filesize) == "x" }
rule time_and_entrypoint { condition: time.now() < 0 or entrypoint == 0x1000 }
)yar";

struct Fixture
{
    RuleSet rules;
    std::unique_ptr<RuleEvaluator> evaluator;

    Fixture()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("modules.yar"));
        QFile file(path);
        if (file.open(QIODevice::WriteOnly))
            file.write(kRules);
        file.close();
        rules = RuleLoader::loadFiles({ path });
        if (!rules.rejections.empty()) {
            for (const Rejection &r : rules.rejections)
                fprintf(stderr, "fuzz_modules: %s\n", qPrintable(r.toString()));
            abort(); // the harness itself is wrong: it must run every rule
        }
        evaluator = std::make_unique<RuleEvaluator>(rules);
    }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > kMaxInput)
        return -1;
    static Fixture fixture;
    FileResult file;
    file.path = "fuzz-input";
    file.size = int64_t(size);
    // The whole input is known: the modules read it from memory, never from the path.
    fixture.evaluator->evaluate(file, std::span<const uint8_t>(data, size));
    return 0;
}
