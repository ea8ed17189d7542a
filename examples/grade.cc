<?xml version="1.0" encoding="UTF-8"?>
<ColorCorrection id="warm_grade">
    <Description>oxi example: warm highlights, slightly lifted red blacks, 8% less saturation</Description>
    <SOPNode>
        <Slope>1.06 1 0.93</Slope>
        <Offset>0.004 0 -0.003</Offset>
        <Power>0.96 1 1.04</Power>
    </SOPNode>
    <SatNode>
        <Saturation>0.92</Saturation>
    </SatNode>
</ColorCorrection>
