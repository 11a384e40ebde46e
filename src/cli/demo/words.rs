//! Word lists the synthetic crawl is written from: no network, no data files.

/// English content words.
pub const ENGLISH: &str = "\
city council river bridge market school teacher student library museum garden harbour train station \
airport road traffic weather rain storm summer winter spring autumn farmer harvest wheat rice coffee \
tea bread kitchen recipe dinner restaurant chef menu price budget tax bank loan interest inflation \
company factory worker union salary office manager engineer software computer network server database \
storage memory processor battery energy solar wind power grid climate carbon forest ocean island \
mountain valley village hospital doctor nurse patient medicine vaccine research scientist laboratory \
experiment data model theory result study survey report article journal editor reader writer novel \
poem music concert orchestra singer guitar piano film cinema actor director stage theatre painting \
artist gallery festival holiday travel hotel tourist ticket passport border election vote minister \
parliament court judge lawyer police crime safety fire emergency rescue volunteer charity community \
neighbour family child parent friend wedding birthday football match team player coach stadium season \
league goal record champion race runner cycling swimming tennis mountain hiking camping fishing boat \
ship port cargo trade export import customs currency market shares investor profit loss growth \
recession startup product customer service delivery online shop phone camera screen keyboard printer \
cloud security password privacy internet website browser search engine robot sensor drone satellite \
rocket planet moon star telescope galaxy physics chemistry biology history geography language grammar \
dictionary translation culture tradition ceremony temple church castle palace tower wall street square \
park lake beach desert snow ice flood drought earthquake volcano island coast wildlife bird fish horse \
insect flower tree seed soil water pipe plumber builder architect design plan schedule meeting deadline \
project contract agreement partner supplier warehouse truck driver bicycle bus tram subway ticket fare \
apartment rent mortgage neighbourhood council budget pension retirement insurance benefit health diet \
exercise sleep stress habit routine morning evening weekend calendar clock minute hour decade century";

/// Chinese content words (segmented by jieba as words).
pub const CHINESE: &str = "\
城市 政府 河流 桥梁 市场 学校 老师 学生 图书馆 博物馆 花园 港口 火车站 机场 道路 交通 天气 下雨 暴雨 夏天 冬天 \
春天 秋天 农民 收获 小麦 水稻 咖啡 茶叶 面包 厨房 菜谱 晚饭 餐厅 厨师 菜单 价格 预算 税收 银行 贷款 利息 通货膨胀 \
公司 工厂 工人 工会 工资 办公室 经理 工程师 软件 电脑 网络 服务器 数据库 存储 内存 处理器 电池 能源 太阳能 风能 电网 \
气候 碳排放 森林 海洋 岛屿 高山 山谷 村庄 医院 医生 护士 病人 药品 疫苗 研究 科学家 实验室 实验 数据 模型 理论 结果 \
调查 报告 文章 期刊 编辑 读者 作家 小说 诗歌 音乐 音乐会 乐团 歌手 吉他 钢琴 电影 影院 演员 导演 舞台 剧院 绘画 \
艺术家 画廊 节日 假期 旅行 酒店 游客 门票 护照 边境 选举 投票 部长 议会 法院 法官 律师 警察 犯罪 安全 火灾 紧急 \
救援 志愿者 慈善 社区 邻居 家庭 孩子 父母 朋友 婚礼 生日 足球 比赛 球队 球员 教练 体育场 赛季 联赛 进球 纪录 冠军 \
赛跑 骑车 游泳 网球 登山 露营 钓鱼 轮船 货物 贸易 出口 进口 海关 货币 股票 投资者 利润 亏损 增长 衰退 创业 产品 \
顾客 服务 快递 网店 手机 相机 屏幕 键盘 打印机 云计算 隐私 互联网 网站 浏览器 搜索引擎 机器人 传感器 无人机 卫星 \
火箭 行星 月亮 星星 望远镜 银河 物理 化学 生物 历史 地理 语言 语法 词典 翻译 文化 传统 仪式 寺庙 城堡 宫殿 高塔 \
城墙 街道 广场 公园 湖泊 海滩 沙漠 积雪 冰川 洪水 干旱 地震 火山 海岸 野生动物 鸟类 鱼类 马匹 昆虫 鲜花 树木 种子 \
土壤 水管 建筑师 设计 计划 日程 会议 期限 项目 合同 协议 伙伴 供应商 仓库 卡车 司机 自行车 公交车 地铁 车票 公寓 \
房租 房贷 养老金 退休 保险 福利 健康 饮食 锻炼 睡眠 压力 习惯 早晨 傍晚 周末 日历 世纪 发展 改革 创新 技术 教育";

/// English function words that join content words into sentences.
pub const ENGLISH_GLUE: &str =
    "the a of and in on for with to from by at about after before under over near";

/// Chinese function words.
pub const CHINESE_GLUE: &str = "的 了 在 和 与 对 把 被 从 向 为 是 有 也 都 就 又 还";

/// Words of an advert, added to a page as a paragraph.
pub const ADVERT_EN: &str = "Sponsored: save twenty percent on premium headphones this weekend only, free delivery, order now at the official store.";
/// The Chinese advert.
pub const ADVERT_ZH: &str = "广告：本周末高端耳机限时八折，全场包邮，立即前往官方旗舰店下单抢购。";
