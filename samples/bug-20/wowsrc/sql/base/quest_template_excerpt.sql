-- Sample schema excerpt for the VianoBugAnalysis demo (not a real dump).
CREATE TABLE `quest_template` (
  `ID` int(10) unsigned NOT NULL DEFAULT '0',
  `QuestType` tinyint(3) unsigned NOT NULL DEFAULT '2',
  `LogTitle` text,
  `LogDescription` text,
  `QuestDescription` text,
  `StartItem` int(10) unsigned NOT NULL DEFAULT '0',
  `RequiredNpcOrGo1` int(11) NOT NULL DEFAULT '0',
  `RequiredNpcOrGoCount1` smallint(5) unsigned NOT NULL DEFAULT '0',
  PRIMARY KEY (`ID`)
) ENGINE=MyISAM DEFAULT CHARSET=utf8;
