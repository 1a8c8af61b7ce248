include "common/base.yar"
include "./other.yara"

rule after_includes { condition: filesize < 10MB }
