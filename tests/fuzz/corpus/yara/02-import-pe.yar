import "pe"
import "math"

rule pe_header : exe windows
{
    condition:
        uint16(0) == 0x5A4D and pe.number_of_sections > 2 and math.entropy(0, filesize) >= 7.0
}
