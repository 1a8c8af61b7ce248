private rule helper_small { condition: filesize < 1KB }
global rule always_small { condition: filesize <= 2048 }
global private rule hidden_gate { condition: not (filesize == 0) }

rule uses_helper : tagged
{
    condition:
        helper_small and hidden_gate
}
