rule bad_modifier { strings: $a = "x" nocase nocase condition: $a }
rule bad_hex { strings: $a = { 4D 5 } condition: $a }
rule unused_string { strings: $a = "never used" condition: true }
rule undefined_name { condition: no_such_identifier }
rule bad_regex { strings: $a = /(unclosed/ condition: $a }
rule fine_after_errors { condition: filesize >= 0 }
