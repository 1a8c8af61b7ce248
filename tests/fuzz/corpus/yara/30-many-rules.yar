rule r1 : t1 t2 { strings: $a = "r1" condition: $a }
rule r2 { strings: $a = "r2" nocase condition: $a and r1 }
private rule r3 { condition: r1 or r2 }
rule r4 : t3 { meta: m = 1 condition: r3 and not r2 }
global rule r5 { condition: true }
rule r6 { condition: 2 of (r1, r2, r3, r4) }
